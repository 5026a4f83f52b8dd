"""Pydantic AI runs as ``ReasoningTrace`` documents, from the run's messages.

One line after a run::

    trace = kp.integrations.pydantic_ai.to_trace(result.all_messages()).trace

Pydantic AI keeps a run as a list of messages: a ``request`` (``system-prompt``, ``user-prompt``,
``tool-return``, ``retry-prompt``, ``retry-feedback`` parts) alternating with a ``response``
(``text``, ``thinking``, ``tool-call``, and the provider's own tools' ``builtin-tool-call`` with
its ``builtin-tool-return`` in the same response). Their JSON
(``ModelMessagesTypeAdapter.dump_json``) is read without importing pydantic_ai. The mapping
(``docs/integrations.md``): the first user prompt is the objective; ``thinking`` and ``text`` are
thoughts, the last response's text the answer; a ``tool-call`` and its ``tool-return`` (same
``tool_call_id``) are one tool call and its observation. Evident errors: a ``retry-prompt`` part
(Pydantic AI before 2.x), a ``tool-return`` whose ``outcome`` is not ``success`` (``retried`` after
a ``ModelRetry`` or a validation error, ``failed``, ``denied``), and ``retry-feedback`` (an output
the agent rejected). A call to the output tool (``final_result``) is the answer, not a tool. A
remote MCP server's ``builtin-tool-call`` (``mcp_server:<id>``) is a call of the server's tool,
or, listing its tools, no step (``_hosted.pydantic_ai_mcp_call``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from knowledgepulse._util.jsonpath import (
    as_object,
    as_string,
    describe_value,
    format_path,
    non_empty,
)
from knowledgepulse._util.times import moment
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import Loc
from knowledgepulse.sources._envelope import (
    PathError,
    TraceOptions,
    assemble,
    finished,
    last_model,
    placed,
)
from knowledgepulse.sources._hosted import (
    PYDANTIC_AI_MCP,
    pydantic_ai_list_tools_error,
    pydantic_ai_mcp_call,
    pydantic_ai_mcp_result,
)
from knowledgepulse.sources._steps import StepBuilder, as_text
from knowledgepulse.trace import TraceItem

CONTENT_HINT = (
    "save the messages with ModelMessagesTypeAdapter.dump_json(result.all_messages()); "
    "Pydantic AI records their text by default"
)
"""How to get Pydantic AI messages that carry text."""

OUTPUT_TOOL = "final_result"
"""Pydantic AI's output tool: ``final_result`` (``final_result_<Type>`` for unions)."""


RETRY_PROMPT_END = "Fix the errors and try again."
"""How Pydantic AI ends every retry prompt it sends the model (``RetryPromptPart.model_response``):
in its spans a retry is known by this text alone (the messages it saves say ``retry-prompt``)."""
RETRY_FEEDBACK_START = (
    "Your previous response failed the application's validation "
    "(this is automated feedback, not a message from the user):"
)
"""How Pydantic AI 2.x opens the feedback on an output it rejected (``RetryFeedbackPart``, sent as
user text: ``_RETRY_FEEDBACK_FRAMING`` in ``pydantic_ai/messages.py``), before its fenced errors."""


def is_retry_prompt(value: Any) -> bool:
    """Whether a tool result or user text is a Pydantic AI retry prompt (an evident error).

    Its spans and the conversations it sends a model (recorded chat rows) carry it as text: a
    ``retry-prompt`` part becomes a tool result, or user text when no tool is named.
    """
    return isinstance(value, str) and (
        value.rstrip().endswith(RETRY_PROMPT_END) or value.lstrip().startswith(RETRY_FEEDBACK_START)
    )


_OUTPUT_TOOLS = f"{OUTPUT_TOOL}_"
"""How the names of Pydantic AI's numbered output tools begin (``final_result_Weather``)."""


def is_output_tool(name: str) -> bool:
    """Whether a tool is Pydantic AI's output tool: a call to it is the answer, not a tool call."""
    return name == OUTPUT_TOOL or name.startswith(_OUTPUT_TOOLS)


_KINDS = frozenset({"request", "response"})
_FAILED_OUTCOMES = frozenset({"failed", "retried", "denied", "interrupted"})


@dataclass
class _Run:
    """One run as read so far."""

    builder: StepBuilder = field(default_factory=StepBuilder)
    objective: str | None = None
    started: datetime | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    last_kind: str | None = None
    answer: str | None = None
    last_text: str | None = None
    last_text_at: datetime | None = None
    incomplete: bool = False
    model: str | None = None
    """The ``model_name`` of the last response that names one."""
    system: str | None = None
    """The system prompt the run opened with (:func:`_system`)."""
    digest: Any = field(default_factory=hashlib.sha256)
    output: str | None = None
    """The text a run result gave as its output, said in the response at ``said_in``."""
    said_in: Loc | None = None
    gave_file: bool = False
    """Whether the last response gave a file and asked for no tool: an output of a file type
    (``output_type=BinaryImage``), which no text says; the run still answered."""
    mcp_tools: dict[str | None, str | None] = field(default_factory=dict)
    """The MCP server calls read so far, by call id: the tool each called, or ``None`` for the
    provider listing a server's tools (``pydantic_ai_mcp_call``)."""
    output_called: bool = False
    """Whether the response read now called the output tool: the first call is the answer
    (Pydantic AI processes it and answers later ones "Output tool not used - a final result
    was already processed.")."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is a Pydantic AI message, or a list of them."""
    if isinstance(value, list):
        return bool(value) and _is_message(value[0])
    return _is_message(value)


def _known_kind(kind: Any) -> bool:
    # A list or an object as a kind is a user's bad record, not a set lookup that raises.
    return isinstance(kind, str) and kind in _KINDS


def _is_message(value: Any) -> bool:
    if not isinstance(value, dict) or not _known_kind(value.get("kind")):
        return False
    parts = value.get("parts")
    return isinstance(parts, list) and all(
        isinstance(part, dict) and "part_kind" in part for part in parts
    )


def to_trace(
    messages: Any,
    *,
    domain: str | None = None,
    confidence: float | None = None,
    agent_id: str | None = None,
    success: bool | None = None,
) -> TraceItem:
    """A Pydantic AI run as a ``ReasoningTrace``.

    Args:
        messages: ``result.all_messages()`` (live ``ModelMessage`` objects), the run result itself,
            their JSON (the bytes or text of ``ModelMessagesTypeAdapter.dump_json``), or that JSON
            parsed (a list of message dicts). Their last run: with ``message_history`` the
            earlier runs come first, each its own trace (a file gives one trace per run). A
            run result's text output is the answer where its messages end after it (a
            ``run_stream`` that ended on text said with tool calls, which still ran).
        domain: the trace's ``task_domain`` (default ``default``).
        confidence: the outcome's confidence (default 0.8 on success, 0.2 on failure).
        agent_id: the agent's name, kept in ``metadata.agent_id`` and the objective when no user
            prompt is recorded.
        success: whether the run succeeded; by default, whether the messages end in the model's
            final answer (a run result given here returned, so it succeeded, unless it is a
            ``run_stream`` result cancelled or left before its output was complete).

    Raises:
        ConversionError: ``messages`` is none of these, a message cannot be read, or there is no
            step.
    """
    if hasattr(messages, "all_messages"):
        # A StreamedRunResult says whether its run ended: stream.cancel() keeps the messages so
        # far, and a consumer may leave the stream before its output is complete.
        ended = getattr(messages, "cancelled", False) is not True and (
            getattr(messages, "is_complete", True) is not False
        )
        output = _output_text(messages) if ended else None
        messages, success = messages.all_messages(), ended if success is None else success
    else:
        output = None
    loaded = _as_json(messages)
    if not isinstance(loaded, list):
        raise ConversionError(
            f"expected a list of Pydantic AI messages, not {describe_value(loaded)}"
        )
    first, last_run = _runs(loaded)[-1] if loaded else (0, [])
    responses = [
        index
        for index, message in enumerate(last_run, start=first)
        if isinstance(message, Mapping) and message.get("kind") == "response"
    ]
    run = _Run(output=output, said_in=(responses[-1],) if responses and output else None)
    for index, message in enumerate(last_run, start=first):
        try:
            _tell(run, message, (index,))
        except PathError as error:
            raise ConversionError(f"{format_path(error.path)}: {error.message}") from error
    return _finish(run, TraceOptions(domain=domain, confidence=confidence), agent_id, success)


def _output_text(result: Any) -> str | None:
    """A finished run result's output when it is text, else ``None``.

    ``run_stream`` ends on the first text the model streams, even in a response that also calls
    tools (which still run): the messages alone then end in those tools' returns, and only the
    result says that the text was the output. A ``StreamedRunResult`` holds it in its settled
    ``result``, an ``AgentRunResult`` as ``output``; the sync wrapper exposes neither.
    """
    try:
        settled = getattr(result, "result", result)
    except RuntimeError:  # pydantic_ai's UserError: the run stopped before settling an output
        return None
    return as_string(getattr(settled, "output", None))


def _runs(messages: Sequence[Any]) -> list[tuple[int, list[Any]]]:
    """Each run's messages, with the index of its first: another ``run_id`` starts a run.

    After ``agent.run(prompt, message_history=earlier.all_messages())``, ``all_messages()``
    holds the earlier runs first (each message keeps the ``run_id`` of the run that made it): the
    model's context, but each run is a trace of its own. Messages with no ``run_id`` (Pydantic
    AI before 1.x) stay with the run before them, and so does a run that resumes the one before
    (see :func:`_resumes`). Those before any ``run_id`` are of the first run that has one: the
    response ``OpenAICompaction`` makes outside any run, its ``compaction`` part standing for the
    earlier turns, opens the history of the run it was made for.
    """
    found: list[tuple[int, list[Any]]] = []
    current: str | None = None
    for index, message in enumerate(messages):
        if not found or _starts_run(message, current):
            found.append((index, []))
        current = _run_id(message) or current
        found[-1][1].append(message)
    return found


def _starts_run(message: Any, current: str | None) -> bool:
    """Whether a message starts a run after messages of run ``current`` (``None``: none named)."""
    run_id = _run_id(message)
    return current is not None and run_id not in (None, current) and not _resumes(message)


def _resumes(message: Any) -> bool:
    """Whether a run's first message resumes the run before it rather than starting a task.

    A run stopped for tools awaiting approval (its output ``DeferredToolRequests``) is resumed
    by a run given ``deferred_tool_results``: its first request holds those calls' returns and no
    user prompt. It is the same task, its calls made before, its answer after: one trace (read
    apart, the first ended in no answer and the second had no request, nor its calls' input).
    """
    parts = as_object(message).get("parts")
    return (
        as_object(message).get("kind") == "request"
        and isinstance(parts, list)
        and bool(parts)
        and not any(as_object(part).get("part_kind") == "user-prompt" for part in parts)
    )


def _run_id(message: Any) -> str | None:
    return non_empty(as_object(message).get("run_id"))


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every run in one file's records.

    A record that is one message belongs to the file's current run (JSON Lines of messages); a
    record that is a list of messages holds its runs (JSON Lines, one message list a line). A
    message of another ``run_id`` starts a run (a conversation continued with
    ``message_history``). A message that cannot be read is reported where it is and left out.
    """
    shared = _Run()
    shared_first: Record | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        if isinstance(item.value, list):
            for first, messages in _runs(item.value) or [(0, [])]:  # none: said, as a run
                run = _Run()
                for index, message in enumerate(messages, start=first):
                    try:
                        _tell(run, message, (index,))
                    except PathError as error:
                        yield item.problem(error.path, error.message)
                yield _finish_record(run, options, item)
            continue
        if shared_first is not None and _starts_run(item.value, shared.run_id):
            yield _finish_record(shared, options, shared_first)  # the next run's messages
            shared, shared_first = _Run(), None
        try:
            _tell(shared, item.value, ())
        except PathError as error:
            yield item.problem(error.path, error.message)
        else:
            shared_first = shared_first or item
    if shared_first is not None:
        yield _finish_record(shared, options, shared_first)


def _finish_record(run: _Run, options: TraceOptions, record: Record) -> TraceItem | Problem:
    at = Location(record.location.file)
    return finished(lambda: placed(_finish(run, options, None, None), at), record)


def _as_json(messages: Any) -> Any:
    """The messages' JSON shape; live objects are dumped by pydantic_ai's own adapter."""
    if isinstance(messages, bytes | bytearray | str):
        try:
            return json.loads(messages)
        except ValueError as error:
            raise ConversionError(f"the messages are not valid JSON: {error}") from error
    if isinstance(messages, Sequence) and all(isinstance(item, Mapping) for item in messages):
        return list(messages)
    if isinstance(messages, Sequence):
        # Only live ModelMessage objects lead here, so pydantic_ai is installed.
        from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: PLC0415 - optional

        try:
            return ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
        except Exception as error:  # pydantic's serializer raises several kinds
            raise ConversionError(f"not a list of Pydantic AI messages: {error}") from error
    return messages


def _tell(run: _Run, message: Any, path: Loc) -> None:
    """Tell the builder what one message holds."""
    if not isinstance(message, Mapping) or not _known_kind(message.get("kind")):
        raise PathError(path, _not_a_message(message))
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise PathError(
            (*path, "parts"), f"expected a list of parts, found {describe_value(parts)}"
        )
    run.digest.update(json.dumps(message, sort_keys=True, default=str).encode("utf-8", "replace"))
    at = moment(message.get("timestamp"))
    first_part = parts[0] if parts and isinstance(parts[0], Mapping) else {}
    run.started = run.started or at or moment(first_part.get("timestamp"))
    run.run_id = _run_id(message) or run.run_id
    if isinstance(message.get("metadata"), Mapping):
        run.metadata = {**message["metadata"], **run.metadata}
    if message.get("state") not in (None, "complete"):
        run.incomplete = True
    run.model = last_model((run.model, message.get("model_name")))  # a response's, a request none
    for index, part in enumerate(parts):
        if not isinstance(part, Mapping) or not isinstance(part.get("part_kind"), str):
            raise PathError((*path, "parts", index), "a part needs a part_kind, a string")
    # "Final result processed." closes a run that answered: it still ends in its answer.
    run.last_kind = run.last_kind if _closes_output(message["kind"], parts) else message["kind"]
    # A response's text is the answer only when it calls no tool and no message follows it.
    if run.last_text is not None:
        run.builder.thought(run.last_text, at=run.last_text_at)
        run.last_text = None
    if message["kind"] == "request":
        run.system = run.system or _system(message, parts)
        for index, part in enumerate(parts):
            _tell_request_part(run, part, (*path, "parts", index), at)
        return
    calls_tools = _waits_on_tools(parts)
    run.gave_file = not calls_tools and any(part["part_kind"] == "file" for part in parts)
    run.output_called = False
    said_output = calls_tools and path == run.said_in  # run_stream's output, said with calls
    texts: list[str] = []
    for index, part in enumerate(parts):
        pending = not calls_tools or said_output
        text = _tell_response_part(run, part, (*path, "parts", index), at, pending=pending)
        if text:
            texts.append(text)
    if said_output and texts:
        run.builder.answer_in_this_turn()  # said before the errors of the calls it asked for
        run.answer = run.output
        return
    run.last_text, run.last_text_at = "\n".join(texts) or None, at


def _system(request: Mapping[str, Any], parts: list[Mapping[str, Any]]) -> str | None:
    """A request's system prompt: its ``instructions``, then its ``system-prompt`` parts.

    Pydantic AI sends the model the instructions first, then the system prompt parts, as system
    messages (``OpenAIChatModel._map_messages``); the first request holds them (each request
    repeats the instructions).
    """
    texts = [as_string(request.get("instructions"))]
    texts += [as_string(p.get("content")) for p in parts if p["part_kind"] == "system-prompt"]
    return "\n\n".join(text for text in texts if text and text.strip()) or None


def _closes_output(kind: str, parts: list[Mapping[str, Any]]) -> bool:
    """Whether a request only acknowledges the output tool's call ("Final result processed.").

    Pydantic AI ends a run that answers through its output tool with this request.
    """
    return (
        kind == "request"
        and bool(parts)
        and all(
            part["part_kind"] == "tool-return"
            and isinstance(part.get("tool_name"), str)
            and is_output_tool(part["tool_name"])
            and part.get("outcome", "success") == "success"
            for part in parts
        )
    )


def _waits_on_tools(parts: list[Mapping[str, Any]]) -> bool:
    """Whether a response asks for tools that run after it (its text then is no answer).

    A ``builtin-tool-call`` (web search, code execution) is run by the model's provider within
    the response: its ``builtin-tool-return`` is in the same response, and the text after it
    can be the answer (before, that text was a thought and a run ending in it no success).
    """
    answered = {_call_id(part) for part in parts if part["part_kind"] == "builtin-tool-return"}
    return any(
        _is_tool_call(part)
        and not (part["part_kind"] == "builtin-tool-call" and _call_id(part) in answered)
        for part in parts
    )


def _is_tool_call(part: Mapping[str, Any]) -> bool:
    name = part.get("tool_name")
    return (
        part["part_kind"] in ("tool-call", "builtin-tool-call")
        and isinstance(name, str)
        and not is_output_tool(name)
    )


def _tell_request_part(run: _Run, part: Mapping[str, Any], path: Loc, at: datetime | None) -> None:
    kind = part["part_kind"]
    when = moment(part.get("timestamp")) or at
    if kind == "user-prompt":
        text = _user_text(part.get("content"))
        if run.objective is None and text:
            run.objective = text
    elif kind in ("tool-return", "builtin-tool-return"):
        _tell_return(run, part, path, when)
    elif kind == "retry-prompt":
        text = _error_text(part.get("content"))
        tool = part.get("tool_name")
        if isinstance(tool, str) and tool and not is_output_tool(tool):
            run.builder.tool_result(tool, error=text, call_id=_call_id(part), at=when)
        else:
            run.builder.error(text, at=when)
    elif kind == "retry-feedback":
        run.builder.error(_error_text(part.get("content")), at=when)


def _tell_return(run: _Run, part: Mapping[str, Any], path: Loc, at: datetime | None) -> None:
    """A tool's return: its observation, or its error when its ``outcome`` says it failed."""
    name = _name(part, path)
    if is_output_tool(name) and part.get("outcome", "success") == "success":
        return  # "Final result processed."
    content = part.get("content")
    if part["part_kind"] == "builtin-tool-return" and _call_id(part) in run.mcp_tools:
        _tell_mcp_return(run, part, name, at)
        return
    outcome = part.get("outcome")  # a list or an object is no outcome, not a set lookup
    failed = isinstance(outcome, str) and outcome in _FAILED_OUTCOMES
    run.builder.tool_result(
        name,
        output=None if failed else _sent(content),
        error=_error_text(content) if failed else None,
        call_id=_call_id(part),
        at=at,
        returned=not failed,  # a return of None is sent to the model (null): an observation
    )


def _tell_response_part(
    run: _Run, part: Mapping[str, Any], path: Loc, at: datetime | None, *, pending: bool
) -> str | None:
    """Tell one response part; a text part that may be the answer is returned, not told."""
    kind = part["part_kind"]
    if kind == "thinking":
        run.builder.thought(as_string(part.get("content")), at=at)
    elif kind == "text":
        text = as_string(part.get("content"))
        if pending:
            return text
        run.builder.thought(text, at=at)
    elif kind in ("tool-call", "builtin-tool-call"):
        name = _name(part, path)
        if is_output_tool(name):
            if not run.output_called:
                run.answer = as_text(part.get("args"))
            run.output_called = True
        elif (mcp := pydantic_ai_mcp_call(name, part.get("args"))) is not None:
            server, tool, arguments = mcp
            run.mcp_tools[_call_id(part)] = tool
            if tool is not None:
                call_id = _call_id(part)
                run.builder.tool_request(tool, arguments, call_id=call_id, at=at, mcp_server=server)
        else:
            arguments = _arguments(part) if kind == "builtin-tool-call" else part.get("args")
            run.builder.tool_request(name, arguments, call_id=_call_id(part), at=at)
    elif kind == "builtin-tool-return":
        # The provider ran the tool: its return is in the response, in the order of its parts
        # (the part's own timestamp is when Pydantic AI read it, before the response's own).
        _tell_return(run, part, path, at)
    return None


def _tell_mcp_return(run: _Run, part: Mapping[str, Any], name: str, at: datetime | None) -> None:
    """An MCP server call's return: the tool's output or error; a failed listing's error."""
    tool = run.mcp_tools[_call_id(part)]
    if tool is None:
        said = pydantic_ai_list_tools_error(name, part.get("content"))
        if said is not None:
            run.builder.error(said, at=at)
        return
    server = name.removeprefix(PYDANTIC_AI_MCP)
    output, error = pydantic_ai_mcp_result(part.get("content"))
    run.builder.tool_result(
        tool,
        output=output,
        error=as_text(error) if error else None,
        call_id=_call_id(part),
        at=at,
        mcp_server=server,
        returned=not error,
    )


_SERVER_IDS = frozenset({"container_id"})
"""What a provider's own tool call names beside what the model wrote: the OpenAI code
interpreter's ``container_id`` (the sandbox it ran in, Pydantic AI's ``args`` with the ``code``)."""


_FILE_KINDS = frozenset({"image-url", "audio-url", "video-url", "document-url", "binary"})
"""Pydantic AI's files (``ImageUrl``, ``AudioUrl``, ``VideoUrl``, ``DocumentUrl``,
``BinaryContent``): a tool that returns one sends the model the file, not the object's fields."""


def _sent(content: Any) -> Any:
    """A tool's return as the model got it: a file said by its media type (``<image/jpeg>``).

    Other readers say an image so (the Responses API's, Gemini CLI's); its URL, bytes and
    Pydantic AI's own fields (``force_download``, ``identifier``...) are no words of the
    model's. A list keeps its other items as they are.
    """
    if isinstance(content, list):
        return [_sent(item) for item in content]
    kind = content.get("kind") if isinstance(content, Mapping) else None
    if not isinstance(kind, str) or kind not in _FILE_KINDS:
        return content  # a tool's own object, whatever its "kind" holds
    kind = kind.removesuffix("-url")
    return f"<{as_string(content.get('media_type')) or kind}>"


def _arguments(part: Mapping[str, Any]) -> Any:
    """A provider's own tool call's arguments: what the model wrote, not where it ran."""
    args = part.get("args")
    if not isinstance(args, Mapping):
        return args
    return {key: value for key, value in args.items() if key not in _SERVER_IDS}


def _finish(
    run: _Run, options: TraceOptions, agent_id: str | None, success: bool | None
) -> TraceItem:
    answer = run.answer or run.last_text
    if run.answer and run.last_text:
        run.builder.thought(run.last_text, at=run.last_text_at)
    run.builder.answer(answer)
    if success is None:
        answered = answer is not None or run.gave_file
        success = run.last_kind == "response" and answered and not run.incomplete
    source_id = run.run_id or run.digest.hexdigest()[:32]
    return assemble(
        run.builder,
        source="pydantic-ai",
        source_id=f"pydantic-ai-{source_id}",
        success=success,
        options=options,
        objective=run.objective,
        fallback_objective=agent_id,
        created_at=run.started,
        result_summary=answer,
        agent_id=agent_id,
        framework="pydantic-ai",
        model=run.model,
        metadata=run.metadata,
        content_hint=CONTENT_HINT,
        system=run.system,
    )


def _name(part: Mapping[str, Any], path: Loc) -> str:
    name = part.get("tool_name")
    if not isinstance(name, str) or not name:
        raise PathError((*path, "tool_name"), f"expected a tool name, found {describe_value(name)}")
    return name


def _call_id(part: Mapping[str, Any]) -> str | None:
    return non_empty(part.get("tool_call_id"))


def _user_text(content: Any) -> str | None:
    """The text of a user prompt: a string, or the strings and text items of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            item if isinstance(item, str) else item.get("content")
            for item in content
            if isinstance(item, str)
            or (isinstance(item, Mapping) and item.get("kind") == "text-content")
        ]
        return "\n".join(text for text in texts if isinstance(text, str)) or None
    return None


def _error_text(content: Any) -> str:
    """A retry's text: the message, or the validation errors as ``loc: msg`` lines."""
    if isinstance(content, list):
        lines = []
        for error in content:
            if isinstance(error, Mapping) and "msg" in error:
                loc = error.get("loc")
                loc = ".".join(map(str, loc)) if isinstance(loc, list | tuple) else str(loc or "")
                lines.append(f"{loc}: {error['msg']}" if loc else str(error["msg"]))
            else:
                lines.append(as_text(error))
        return "\n".join(lines) or "retry"
    return as_text(content) or "retry"


def genai_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Pydantic AI messages as GenAI messages (``{"role", "parts"}``), for another reader.

    ``mlflow.pydantic_ai.autolog()`` keeps a model call's request as these messages (its span's
    ``messages``) and its reply as one response: a ``system-prompt`` part is the system's, a
    ``user-prompt`` the user's, a ``tool-return`` a tool's result, a ``retry-prompt`` a failed
    call's result (user text where it names no tool); a response's ``text``, ``thinking`` and
    ``tool-call`` parts the model's, and its ``builtin-tool-call`` and ``builtin-tool-return``
    a tool its provider ran (marked ``builtin``, as Pydantic AI's spans mark it). A call's
    arguments and a return are read as the messages' own reader reads them (a file returned is
    ``<image/png>``, a sandbox's id no argument). Parts of other kinds are left out.
    """
    found: list[dict[str, Any]] = []
    for message in messages:
        if not _is_message(message):
            continue
        for part in message["parts"]:
            said = _genai_part(part)
            if said is None:
                continue
            role, genai = said
            if found and found[-1]["role"] == role and role != "system":
                found[-1]["parts"].append(genai)
            else:
                found.append({"role": role, "parts": [genai]})
    return found


def _genai_part(part: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """One Pydantic AI part as a GenAI part, and the role of the message that holds it."""
    kind = part["part_kind"]
    if kind == "system-prompt":
        return "system", {"type": "text", "content": as_string(part.get("content"))}
    if kind == "user-prompt":
        return "user", {"type": "text", "content": _user_text(part.get("content")) or ""}
    if kind in ("text", "thinking"):
        shown = "text" if kind == "text" else "reasoning"
        return "assistant", {"type": shown, "content": as_string(part.get("content"))}
    call = {"type": "tool_call", "id": _call_id(part), "name": part.get("tool_name")}
    returned = {**call, "type": "tool_call_response", "response": _sent(part.get("content"))}
    if kind == "tool-call":
        return "assistant", {**call, "arguments": part.get("args")}
    if kind == "tool-return":
        return "tool", returned
    # A tool the provider ran, in its reply: marked builtin, as Pydantic AI's own spans mark it.
    if kind == "builtin-tool-call":
        return "assistant", {**call, "arguments": _arguments(part), "builtin": True}
    if kind == "builtin-tool-return":
        return "assistant", {**returned, "builtin": True}
    if kind == "retry-prompt":
        text = _error_text(part.get("content"))
        if not part.get("tool_name"):
            return "user", {"type": "text", "content": text}
        response = {"type": "tool_call_response", "id": _call_id(part), "response": text}
        return "tool", {**response, "name": part.get("tool_name"), "is_error": True}
    return None


def function_tools(request_parameters: Any) -> list[dict[str, Any]]:
    """The tools a model call was offered, as OpenAI function definitions.

    From the ``model_request_parameters`` Pydantic AI passes its model (``function_tools``:
    ``name``, ``description``, ``parameters_json_schema``), as ``mlflow.pydantic_ai.autolog()``
    keeps it.
    """
    listed = (
        request_parameters.get("function_tools")
        if isinstance(request_parameters, Mapping)
        else None
    )
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": as_string(tool.get("description")),
                "parameters": tool.get("parameters_json_schema") or {},
            },
        }
        for tool in (listed if isinstance(listed, list) else [])
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
    ]


def _not_a_message(value: Any) -> str:
    return (
        f"not a Pydantic AI message: {describe_value(value)}; expected "
        "{kind: request|response, parts: [...]}, as "
        "ModelMessagesTypeAdapter.dump_json(result.all_messages()) writes them"
    )
