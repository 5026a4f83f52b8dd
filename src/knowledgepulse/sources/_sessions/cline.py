"""Cline and Roo Code task histories (``tasks/<taskId>/api_conversation_history.json``) as traces.

Cline (the VS Code extension ``saoudrizwan.claude-dev``) and its fork Roo Code
(``rooveterinaryinc.roo-cline``) keep each task in a folder of its own: the messages sent to the
model in ``api_conversation_history.json`` (a JSON list of Anthropic messages, ``ts`` on each in
newer versions), the chat panel's events in ``ui_messages.json`` and ``task_metadata.json``. The
history is the trace: one file, one task, one trace (its id the task's folder name). Its messages
are read by the Anthropic Messages reader once the extension's own wrapping is taken off:

* the first user message holds the task in ``<task>...</task>`` (Roo Code since 3.3x:
  ``<user_message>``): the objective is what is inside;
* each user message ends with ``<environment_details>`` (open files, the time, the mode, the
  cost) that the extension adds for the model: no words of the user's, left out;
* before native tool calling the model calls tools in XML inside its text, one a message
  (``<read_file><path>a.py</path></read_file>``; the tags are Cline's and Roo Code's tool
  names), and the extension answers in the next user message with ``[read_file for 'a.py']
  Result:`` and the output: a tool call and its result; ``The tool execution failed with the
  following error``, a denied operation or a missing parameter is a failed call, and
  ``[ERROR] You did not use a tool...`` an evident error outside a tool. A call left unclosed
  (the extension stopped the model after the first tool: ``[Response interrupted by a tool use
  result...]``) ran when the next message gives its result; when it says ``Tool [NAME] was not
  executed because a tool has already been used in this message`` instead, the call (an
  ``attempt_completion`` too, then no answer) was refused: a failed call, that note its result;
* with native tool calling the same tools are ``tool_use`` blocks, answered by ``tool_result``
  blocks or (Cline 3.x) by the same text sections; the focus chain's reminders to the model
  (``# task_progress RECOMMENDED``...) are no one's words;
* ``attempt_completion``'s ``result`` is the answer, no tool; feedback the user gives on it
  (``<feedback>``), the new instructions of a resumed task (``<user_message>``) and a Roo Code
  sub-task's report (``[new_task completed] Result:``, the result of its ``new_task`` call) are
  what they are: replies of the user's, and a call's result;
* ``<thinking>`` text, ``thinking`` and Roo Code's ``reasoning`` blocks are thoughts; Roo Code's
  summary of the turns before a context condensation (``isSummary``) is left out, the turns stay;
  where the condensation replaced them, the user's words after it answer the agent.

The history records no outcome: success is whether the task ends in the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePath
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import anthropic
from knowledgepulse.sources._chat._text import content_text
from knowledgepulse.sources._envelope import TraceOptions, assemble, finished
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Cline and Roo Code write a task's messages into its api_conversation_history.json"
HISTORY = "api_conversation_history.json"
COMPLETION = "attempt_completion"
"""The tool a Cline or Roo Code task ends with: its ``result`` is the answer."""
TOOLS = frozenset(
    {
        # Cline's (src/shared/tools.ts) and Roo Code's (packages/types/src/tool.ts), all versions.
        "access_mcp_resource",
        "act_mode_respond",
        "apply_diff",
        "apply_patch",
        "ask_followup_question",
        COMPLETION,
        "browser_action",
        "codebase_search",
        "condense",
        "edit_file",
        "edit_files",
        "execute_command",
        "fetch_instructions",
        "focus_chain",
        "generate_explanation",
        "generate_image",
        "insert_content",
        "list_code_definition_names",
        "list_files",
        "load_mcp_documentation",
        "new_rule",
        "new_task",
        "plan_mode_respond",
        "plan_mode_response",
        "read_file",
        "replace_in_file",
        "report_bug",
        "run_slash_command",
        "search_and_replace",
        "search_files",
        "summarize_task",
        "switch_mode",
        "update_todo_list",
        "use_skill",
        "use_mcp_tool",
        "use_subagents",
        "web_fetch",
        "web_search",
        "write_to_file",
    }
)
"""The tools whose XML tags in assistant text are calls."""

_WRAPPED = re.compile(r"\A\s*<(task|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)
"""The first user message's wrapping of the task (Cline's ``<task>``, Roo Code 3.3x's)."""
_ENVIRONMENT = re.compile(
    r"\A\s*<environment_details>.*?(?:</environment_details>|\Z)"
    r"|\s*<environment_details>(?:(?!<environment_details>).)*</environment_details>\s*\Z",
    re.DOTALL,
)
"""The environment the extension adds: a block that opens with it, or a text's closing part.
Inside a text, the tags are what a tool read (a command that printed a task's history), no
environment: the output goes on, and stays the call's result."""
_CALL = re.compile(r"<(" + "|".join(sorted(TOOLS)) + r")>(.*?)</\1>", re.DOTALL)
_OPEN_CALL = re.compile(r"<(" + "|".join(sorted(TOOLS)) + r")>(.*)\Z", re.DOTALL)
"""A call whose closing tag never came: the model was stopped inside it."""
_PARAMETER = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.DOTALL)
_THINKING_TAG = re.compile(r"</?thinking>\n?")
_INTERRUPTED = re.compile(r"\s*\[Response interrupted by [^\]]*\]")
"""The extension's note on assistant text it cut (after a tool, by the user, by an API error)."""
_RESULT = re.compile(r"\A\[([a-z_]+)\b.*?\] Result:\s*", re.DOTALL)
"""``[read_file for 'a.py'] Result:``, ``[new_task in Code mode: '...'] Result:``."""
_RESUMED = re.compile(r"\A\s*(?:\[TASK RESUMPTION\]|New instructions for task continuation:)")
"""How the extension opens a resumed task's message (the user's new words in it)."""
_REFUSED = r"Tool \[([a-z_]+)\] was not executed because"
"""How the extension refuses a call the model made after another in one message (``Tool
[attempt_completion] was not executed because a tool has already been used in this message``)."""
_NOT_EXECUTED = re.compile(r"\A\s*" + _REFUSED)
_FEEDBACK = re.compile(r"<(feedback|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)
_REMINDER = re.compile(
    r"\A\s*(?:# task_progress\b|# TODO LIST UPDATE REQUIRED"
    r"|\(The user did not provide a new message\.)"
)
"""Text blocks Cline adds for the model alone, no words of the user's nor a tool's: its focus
chain's reminders (``# task_progress RECOMMENDED``, ``# task_progress List (Optional - Plan
Mode)``, ``# TODO LIST UPDATE REQUIRED``...) and a resumed task's note that the user said
nothing."""
_NO_TOOL = re.compile(r"\A\s*\[ERROR\] You did not use a tool")
_FAILED = re.compile(
    r"\A\s*(?:The tool execution failed with the following error|The user denied this operation"
    r"|Missing value for required parameter|\[ERROR\]|" + _REFUSED + ")"
)
"""How the extension words a call that failed (formatResponse: toolError, toolDenied...)."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is a task's first message: the task in ``<task>`` tags."""
    if not isinstance(value, dict) or value.get("role") != "user":
        return False
    content = value.get("content")
    if isinstance(content, list):
        first = content[0] if content else None
        content = first.get("text") if isinstance(first, dict) else None
    return isinstance(content, str) and _WRAPPED.match(content) is not None


@dataclass
class _Task:
    """One task's messages as read, and where the file starts."""

    first: Record
    messages: list[Mapping[str, Any]] = field(default_factory=list)
    started: float | None = None


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """The one trace of a task's history: its records are its messages, in order."""
    task: _Task | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        value = item.value
        if not isinstance(value, dict) or as_string(value.get("role")) not in anthropic.ROLES:
            if isinstance(value, dict) and value.get("type") == "reasoning":
                continue  # Roo Code's encrypted reasoning item: nothing to read
            yield item.problem(
                (),
                f"not a message of a Cline or Roo Code task: {describe_value(value)}; expected "
                f"{{role: user|assistant, content: ...}}, as tasks/<taskId>/{HISTORY} holds them",
            )
            continue
        if not isinstance(value.get("content"), str | list):
            content = value.get("content")
            yield item.problem(
                ("content",), f"expected text or a list of blocks, found {describe_value(content)}"
            )
            continue
        task = task or _Task(item)
        if task.started is None and isinstance(value.get("ts"), int | float):
            task.started = value["ts"] / 1000
        if value.get("isTruncationMarker") is not True:
            task.messages.append(value)
    if task is not None:
        yield finished(partial(_finish, task, options), task.first)


def _finish(task: _Task, options: TraceOptions) -> TraceItem:
    reading = _anthropic(task.messages)
    builder = StepBuilder()
    told = anthropic.tell(
        reading.messages, builder, errors=reading.errors, condensed=reading.condensed
    )
    location = task.first.location
    task_id = _task_id(location.file)
    return assemble(
        builder,
        source="cline",
        source_id=task_id,
        success=told.answered and builder.final_answer is not None,
        options=options,
        objective=told.objective,
        created_at=task.started if task.started is not None else _created(task_id),
        result_summary=builder.final_answer,
        agent_id="cline",
        framework="cline",
        content_hint=CONTENT_HINT,
        location=Location(location.file, location.line),
    )


_MILLISECONDS = re.compile(r"\A1\d{12}\Z")
"""A task id Cline made of the time it started (``Date.now()``, milliseconds: 2001 to 2286)."""


def _created(task_id: str) -> float | None:
    """When the task started, by its id, else ``None``.

    Cline names a task by its start time in milliseconds, which is all the time a history
    without ``ts`` (Cline before 3.x) holds. Roo Code's ids are UUIDs: no time.
    """
    return int(task_id) / 1000 if _MILLISECONDS.match(task_id) else None


def _task_id(file: str | None) -> str:
    """The task's id: its folder's name (``tasks/<taskId>/``), else the file's own name."""
    path = PurePath(file or "-")
    return path.parent.name if path.name == HISTORY and path.parent.name else path.stem


@dataclass
class _Reading:
    """What reading a task's messages in order knows so far."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    errors: set[int] = field(default_factory=set)
    pending: list[tuple[str, str]] = field(default_factory=list)
    """The XML calls of the last assistant message not answered yet: (name, id)."""
    completions: set[str] = field(default_factory=set)
    """The ids of native ``attempt_completion`` calls: their results are the user's feedback."""
    condensed: set[int] = field(default_factory=set)
    """The indexes of Roo Code's summaries (``isSummary``): the turns a condensation replaced."""


def _anthropic(messages: list[Mapping[str, Any]]) -> _Reading:
    """The task's messages as plain Anthropic messages; which are errors, which summaries.

    A summary is left out (it retells the turns before it, no step of the task), but it stays
    where it was: the turns it replaced were the agent's, so the user's feedback after it (on
    a completion the summary stands for) is a reply, not more of the task's first message.
    """
    reading = _Reading()
    merged = _merged(messages)
    last = max(
        (n for n, m in enumerate(merged) if m["role"] == "assistant" and not _summary(m)),
        default=-1,
    )
    for number, message in enumerate(merged):
        if _summary(message):
            reading.condensed.add(len(reading.messages))
            reading.messages.append({"role": "assistant", "content": []})
        elif message["role"] == "assistant":
            reading.pending = []
            reply = merged[number + 1]["content"] if number + 1 < len(merged) else []
            blocks = _assistant(reading, message["content"], number, _answered(reply))
            reading.messages.append(
                {"role": "assistant", "content": _spoken(blocks, number == last)}
            )
        else:
            _user(reading, message["content"], first=number == 0)
    return reading


def _summary(message: Mapping[str, Any]) -> bool:
    """Whether a message is Roo Code's summary of the turns a context condensation replaced."""
    return message.get("isSummary") is True


def _merged(messages: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages of one role in a row as one (Roo Code writes a sub-task's report apart).

    A summary stays a message of its own, between the messages around it.
    """
    merged: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        summary = _summary(message)
        joined = merged and merged[-1]["role"] == message["role"] and not _summary(merged[-1])
        if joined and not summary:
            merged[-1]["content"] = [*merged[-1]["content"], *blocks]
            continue
        merged.append({"role": message["role"], "content": list(blocks), "isSummary": summary})
    return merged


@dataclass(frozen=True)
class _Answered:
    """The tools a user message answers, by name.

    Those its result sections name (``[read_file for 'a.py'] Result:``), and those it says it
    did not run (``Tool [...] was not executed``).
    """

    ran: frozenset[str]
    refused: frozenset[str]


def _answered(blocks: list[Any]) -> _Answered:
    texts = [
        block["text"].strip()
        for block in blocks
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return _Answered(
        frozenset(found.group(1) for text in texts if (found := _RESULT.match(text))),
        frozenset(found.group(1) for text in texts if (found := _NOT_EXECUTED.match(text))),
    )


def _assistant(
    reading: _Reading, blocks: list[Any], number: int, answered: _Answered
) -> list[dict[str, Any]]:
    """An assistant message's blocks; its text outside calls ``_said``, a result ``_answer``."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):  # for the Anthropic reader to say what it is
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            out.extend(_said(reading, block["text"], number, len(out), answered))
        elif kind == "reasoning" and isinstance(block.get("text"), str):
            out.append({"type": "thinking", "thinking": block["text"]})
        elif kind == "tool_use" and block.get("name") == COMPLETION:
            arguments = block.get("input")
            result = arguments.get("result") if isinstance(arguments, dict) else None
            reading.completions.add(str(block.get("id")))
            out.append({"type": _ANSWER, "text": as_string(result) or ""})
        else:
            if kind == "tool_use":
                # Cline 3.x's native calls are answered, as its XML ones are, by text sections
                # ("[read_file for 'a.py'] Result:"), not tool_result blocks: the call waits for
                # its section like an XML call (a tool_result block, if one comes, answers by id).
                reading.pending.append((str(block.get("name")), str(block.get("id"))))
            out.append(block)
    return out


_SAID = "said"
"""A block of assistant text outside any call (see :func:`_spoken`)."""
_ANSWER = "answer"
"""A block of ``attempt_completion``'s result."""


def _spoken(blocks: list[dict[str, Any]], last: bool) -> list[dict[str, Any]]:
    """The message's text as Anthropic blocks: said to the user, or a thought.

    Text the user reads in the chat is said (a user's reply may answer it), but beside
    ``attempt_completion``, whose result alone is the answer, and in a last message that
    calls nothing: the task ended without completing, and that text is no answer.
    """
    kinds = [block.get("type") if isinstance(block, dict) else None for block in blocks]
    answering = _ANSWER in kinds
    said = not answering and ("tool_use" in kinds or not last)
    return [
        {"type": "text", "text": block["text"]}
        if kind == _ANSWER or (kind == _SAID and said)
        else {"type": "thinking", "thinking": block["text"]}
        if kind == _SAID
        else block
        for block, kind in zip(blocks, kinds, strict=True)
    ]


def written_calls(text: str) -> list[str]:
    """The tools a Cline or Roo Code model's text calls, in their XML tags, in order."""
    return [call.group(1) for call in _CALL.finditer(text)]


def _said(
    reading: _Reading, text: str, number: int, at: int, answered: _Answered
) -> list[dict[str, Any]]:
    """Assistant text as blocks: thoughts, the XML calls in it, and the answer.

    A call left open at the end (the extension stopped the model once a tool's tags began) ran
    when the next message gives its result, and was refused when it says the call was not
    executed: its parameters are those closed before the cut. An ``attempt_completion`` the
    extension refused is a call, no answer.
    """
    text = _INTERRUPTED.sub("", text)
    calls = list(_CALL.finditer(text))
    cut = _OPEN_CALL.search(text, calls[-1].end() if calls else 0)
    ran = cut is not None and cut.group(1) in answered.ran and cut.group(1) != COMPLETION
    if cut is not None and (ran or cut.group(1) in answered.refused):
        calls.append(cut)
    blocks: list[dict[str, Any]] = []
    start = 0
    for count, call in enumerate(calls):
        blocks.append(_outside(text[start : call.start()]))
        start = call.end()
        name, body = call.group(1), call.group(2)
        arguments = dict(_PARAMETER.findall(body))
        if name == COMPLETION and name not in answered.refused:  # the answer: its result
            blocks.append({"type": _ANSWER, "text": str(arguments.get("result", body)).strip()})
            continue
        call_id = f"xml-{number}-{at + count}"
        reading.pending.append((name, call_id))
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    blocks.append(_outside(text[start:]))
    return [block for block in blocks if block["type"] != _SAID or block["text"]]


def _outside(text: str) -> dict[str, Any]:
    return {"type": _SAID, "text": _THINKING_TAG.sub("", text).strip()}


def _task(reading: _Reading, blocks: list[Any]) -> bool:
    """Whether the first message holds the task in its tags: then the task is its message.

    The rest (the environment, the files the task mentions) is the extension's.
    """
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    task = next((found for t in texts if isinstance(t, str) and (found := _WRAPPED.match(t))), None)
    if task is not None:
        reading.messages.append({"role": "user", "content": task.group(2)})
    return task is not None


def _user(reading: _Reading, blocks: list[Any], *, first: bool) -> None:
    if first and _task(reading, blocks):
        return
    out: list[dict[str, Any]] = []
    sections: dict[str, list[str]] = {}  # a call's id -> its result's texts, in order
    names: dict[str, str] = {}  # a call's id -> its name
    current: str | None = None  # the id of the call whose result the text now belongs to
    for block in blocks:
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            if isinstance(block, dict):  # a native result, an image: as the block says
                native = block.get("type") == "tool_result"
                out.append(_native_result(reading, block) if native else block)
            continue
        text = _ENVIRONMENT.sub("", block["text"]).strip()
        if text != block["text"].strip() or _RESUMED.match(text):
            current = None  # the results end: the environment, or the user's new words
        if not text or _REMINDER.match(text):
            continue  # the extension's reminder to the model
        current, text = _opening(reading, text, names, current)
        if current == _DROPPED:
            continue
        if current == COMPLETION:
            # The user's words on a completion are in <feedback>; the rest of its section is
            # Cline's ("Done", the output of the command the completion offered to run).
            out.extend({"type": "text", "text": words} for words in _feedback(text))
        elif current is not None:
            sections.setdefault(current, []).extend([text] if text else [])
        elif _NO_TOOL.match(text):  # an error met outside a tool: a message of its own
            _flush(reading, [*_results(names, sections), *out])
            sections, out = {}, []
            reading.errors.add(len(reading.messages))
            reading.messages.append({"role": "user", "content": text})
        else:
            out.extend({"type": "text", "text": words} for words in _replies(text))
    _flush(reading, [*_results(names, sections), *out])


_DROPPED = ""
"""The section of a result that answers no call the file shows: left out."""


def _opening(
    reading: _Reading, text: str, names: dict[str, str], current: str | None
) -> tuple[str | None, str]:
    """The call a user text answers from here on, and the text less its header.

    ``current`` goes on where the text opens no section. A result section opens with its
    header; the extension's refusal of a call the model made after another (``Tool [...] was not
    executed...``) is that call's result, a failure.
    """
    header = _RESULT.match(text)
    if header is not None:
        return _answering(reading, header.group(1), names), text[header.end() :].strip()
    refused = _NOT_EXECUTED.match(text)
    if refused is not None:
        return _waiting(reading, refused.group(1), names) or _DROPPED, text
    return current, text


def _results(names: dict[str, str], sections: dict[str, list[str]]) -> list[dict[str, Any]]:
    return [_xml_result(call_id, sections[call_id]) for call_id in names if call_id in sections]


def _waiting(reading: _Reading, name: str, names: dict[str, str]) -> str | None:
    """The id of the first pending call of a name, now answered; ``None`` if none waits."""
    for index, (pending, call_id) in enumerate(reading.pending):
        if pending == name:
            del reading.pending[index]
            names[call_id] = name
            return call_id
    return None


def _answering(reading: _Reading, name: str, names: dict[str, str]) -> str:
    """The id of the call a result section answers: the first pending call of its name."""
    waiting = _waiting(reading, name, names)
    if waiting is not None:
        return waiting
    if name == COMPLETION:
        names[COMPLETION] = COMPLETION
        return COMPLETION
    # A second section for a call answered here (a sub-task's report).
    answered = [call_id for call_id, called in names.items() if called == name]
    if answered:
        return answered[-1]
    # A section whose header names no waiting call answers the waiting call whose name holds
    # its word, else the oldest one still waiting: Cline describes a few tools by another word
    # (use_subagents' result is "[subagents] Result:").
    if reading.pending:
        index = next((n for n, (called, _) in enumerate(reading.pending) if name in called), 0)
        pending, call_id = reading.pending.pop(index)
        names[call_id] = pending
        return call_id
    return _DROPPED  # a section that answers no call the file shows: left out


def _xml_result(call_id: str, texts: list[str]) -> dict[str, Any]:
    text = "\n\n".join(texts)
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": text,
        "is_error": bool(_FAILED.match(text)),
    }


def _native_result(reading: _Reading, block: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_result`` block; one answering ``attempt_completion`` is the user's feedback."""
    if str(block.get("tool_use_id")) not in reading.completions:
        return dict(block)
    content = block.get("content")
    text = content_text(content) if isinstance(content, list) else as_string(content)
    return {"type": "text", "text": "\n".join(_replies(_ENVIRONMENT.sub("", text or "")))}


def _feedback(text: str) -> list[str]:
    return [words for _, words in _FEEDBACK.findall(text) if words.strip()]


def _replies(text: str) -> list[str]:
    """The user's words in a text the extension wrote around them (``<feedback>``...)."""
    found = _feedback(text)
    if found:
        return found
    if text.lstrip().startswith(("[TASK RESUMPTION]", "The user has provided feedback")):
        return []  # the extension's own text, with no words of the user's
    return [text] if text.strip() else []


def _flush(reading: _Reading, blocks: list[dict[str, Any]]) -> None:
    if blocks:
        reading.messages.append({"role": "user", "content": blocks})


__all__ = ["CONTENT_HINT", "convert_records", "recognises"]
