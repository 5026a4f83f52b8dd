"""Codex session files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as traces.

Each line is ``{timestamp, type, payload}``. ``session_meta`` opens the session (its ``id``,
``cli_version``, and in newer rollouts its ``base_instructions``, ``{"text": ...}``: the system
prompt, what Codex sends as the request's ``instructions``; the ``developer`` messages among the
items, the sandbox's permissions and the modes, skills and plugins of the turn, are context Codex
adds as it adds the environment, not it); each ``response_item`` holds an OpenAI Responses item
the model was given or wrote (``message``, ``reasoning``, ``function_call`` /
``custom_tool_call`` / ``local_shell_call`` / ``web_search_call`` and their ``*_output``);
``event_msg`` lines are the
interface's copies of the same turns (``user_message``, ``agent_message``, token counts) and
``turn_context`` / ``compacted`` lines settings and summaries: no step of their own. A file is one
session, read by the Responses reader, so the mapping is that of Responses rows (the first user
message is the objective, the last assistant message after the last call the answer). Left out:
the user messages, and the parts of one, that Codex writes itself (``<environment_context>``,
``<user_instructions>``, the AGENTS.md instructions: Codex 0.12x writes the AGENTS.md
instructions and the environment as two parts of one message; the ``<image name=[Image #1]>`` and
``</image>`` parts it puts around an image the user attached); a message of the IDE extension
(``# Context from my IDE setup:``, the open tabs...) keeps only the user's words, after
``## My request for Codex:``. A rollout with no user ``response_item`` (a trimmed one; Codex
Desktop's, as codemie-code keeps them) takes the user's turns from the ``event_msg``
``user_message`` lines, the interface's copies, each where it came: the first the objective, a
later one a reply. A tool output is
an error when it says so: ``success: false``, or a non-zero exit code (``Exit code: 1``,
``{"metadata": {"exit_code": 1}}``, ``failed in sandbox ... exit code: 1``, or the unified exec
header's ``Process exited with code 1`` after its ``Chunk ID`` and ``Wall time``), or Codex's
own refusal of the call (``patch rejected: empty patch``, ``apply_patch verification failed``,
``failed to parse function arguments: ...``). A session
file records no outcome, so success is whether the session ends in the assistant's answer. Later
``session_meta`` lines (a forked session copies its parent's) open no new trace. An
``event_msg`` ``thread_rolled_back`` (the user rolled the thread back ``num_turns`` turns) drops
those turns, from the ``num_turns``-th user message from the end on, as Codex rebuilds the thread.
An ``event_msg`` ``error`` (a turn's model request failed: ``You've hit your usage limit...``,
``codex_error_info: usage_limit_exceeded``) is an evident error where it came, as the same
failure is in what ``codex exec --json`` prints.

Codex 0.149 and later also write each turn item as it completed, an ``event_msg``
``item_completed`` (``history_mode: paginated`` rollouts of 0.151+ among them). A rollout that
holds these and no ``response_item`` (as cmdctrlai/daemons keeps a Codex 0.153 one) is read from
them: ``UserMessage`` and ``AgentMessage`` are the user's and the assistant's messages,
``Reasoning`` a reasoning item, ``CommandExecution`` a ``shell`` call (its ``command``) whose
output is its ``stdout``, failed when its ``exit_code`` is not 0 or its ``status`` ``failed`` /
``declined``. Beside ``response_item`` lines they are copies of the same turns, no step; other
item types (``Plan``...) are read past.

Codex CLI before its ``{timestamp, type, payload}`` lines (the rollouts of mid-2025) wrote the
session's ``{id, timestamp, instructions, git}`` as the first line, then each Responses item bare
(``{"type": "message", ...}``) and ``{"record_type": "state"}`` snapshots between them: read as
the ``session_meta``, the ``response_item`` lines, and nothing.

What ``codex exec --json`` prints (the Codex SDK's thread events) is read as :mod:`.codex_exec`
says: a file whose first line is one of its events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from knowledgepulse._util.jsonpath import as_string, describe_value, non_blank, non_empty
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import openai_responses
from knowledgepulse.sources._chat._text import content_text
from knowledgepulse.sources._envelope import PathError, TraceOptions, assemble, finished
from knowledgepulse.sources._sessions import codex_exec
from knowledgepulse.sources._sessions._documents import first_record
from knowledgepulse.sources._steps import TOOL_FAILED, StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Codex writes the messages of every session into its rollout .jsonl"
LINES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
"""The ``type`` of a rollout line that tells a file is one; later versions add others
(``world_state``), read past."""
_LEGACY_META = frozenset({"id", "timestamp", "instructions", "git"})
"""The keys of an older rollout's first line, the session's (see the module's docstring)."""
_OUTPUT_TEXT = frozenset({"input_text", "output_text", "text"})
_CONTEXT = re.compile(
    r"\s*(<([a-z_ ]+)>[\s\S]*</\2>"
    r"|# AGENTS\.md instructions(?: for [^\n]*\n[\s\S]*<INSTRUCTIONS>[\s\S]*</INSTRUCTIONS>)?)\s*$"
)
"""A user message (or part of one) Codex writes itself: one tagged block, or the AGENTS.md
instructions (``# AGENTS.md instructions for DIR`` and an ``<INSTRUCTIONS>`` block)."""
_IMAGE_TAG = re.compile(r"\s*(?:<image(?:\s[^<>]*)?>|</image>)\s*")
"""A text part Codex writes around an image the user attached (a pasted or dropped file):
``<image>`` or ``<image name=[Image #1]>`` (``path="..."`` in newer versions) before the image
part, ``</image>`` after it (its ``image_open_tag_text`` and ``image_close_tag_text``)."""
_EXIT_CODE = re.compile(
    r"(?:(?:Chunk ID|Wall time): [^\n]*\n)*"
    r"(?:Exit code:|Process exited with code|failed in sandbox .*?exit code:) (\d+)",
    re.DOTALL,
)
"""How a command's output gives its exit code (the sandbox's refusal, Codex 0.40, and the
unified exec header of ``exec_command`` / ``write_stdin``, Codex 0.12x, included)."""
_REFUSED = re.compile(
    r"patch rejected(?::| by user)|failed to parse function arguments:"
    r"|apply_patch verification failed:"
)
"""How an output starts that Codex wrote itself, refusing the call before it ran
(``FunctionCallError::RespondToModel``: its patch safety check, ``patch rejected: empty patch``,
the user's denial, arguments that are no JSON, a patch whose context lines are not in the file,
``apply_patch verification failed: Failed to find expected lines in ...``). Codex 0.3x to 0.5x
rollouts keep such an output as bare text, without the ``success: false`` the error carried, so
its words are all that say it failed."""
_IDE_REQUEST = "## My request for Codex:"
"""Where the user's words start in a message the IDE extension wraps in its context."""


@dataclass
class _Session:
    """One rollout's response items as read so far, and where it starts."""

    first: Record
    id: str | None = None
    items: list[Mapping[str, Any]] = field(default_factory=list)
    said: str | None = None
    """The first ``event_msg`` ``user_message``: the objective when no user item holds one."""
    asked: list[tuple[int, str]] = field(default_factory=list)
    """Each ``event_msg`` ``user_message``'s words and how many items came before it: the user's
    turns of a rollout whose ``response_item`` lines hold none (Codex Desktop's, as kept)."""
    rolled_back: bool = False
    completed: list[Mapping[str, Any]] = field(default_factory=list)
    """The ``item_completed`` events' items as Responses items: the turns when no
    ``response_item`` holds them (see the module's docstring)."""
    started: datetime | None = None
    version: str | None = None
    model: str | None = None
    """The model the last ``turn_context`` names: the one the session's last turn ran on."""
    legacy: bool = False
    """Whether the rollout is of the older layout, its items bare (see the module's docstring)."""
    system: str | None = None
    """The ``session_meta``'s ``base_instructions``: Codex's system prompt (its request's
    ``instructions``)."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is a rollout's line, or a ``codex exec --json`` event."""
    return (
        (
            isinstance(value, dict)
            and as_string(value.get("type")) in LINES
            and isinstance(value.get("payload"), dict)
        )
        or _legacy_meta(value)
        or codex_exec.recognises(value)
    )


def _legacy_meta(value: Any) -> bool:
    """Whether a line is an older rollout's first: the session's id, start and instructions."""
    return (
        isinstance(value, dict)
        and value.keys() <= _LEGACY_META
        and "instructions" in value
        and isinstance(value.get("id"), str)
        and isinstance(value.get("timestamp"), str)
    )


def _enveloped(session: _Session, value: Any) -> Any:
    """A line as the line Codex writes now: an older rollout's in today's envelope.

    ``None`` for an older rollout's state snapshot; a line of a rollout of today as it is.
    """
    if session.id is None and _legacy_meta(value):
        session.legacy = True
        return {"type": "session_meta", "payload": value}
    if not session.legacy or not isinstance(value, dict):
        return value
    if "record_type" in value and "type" not in value:
        return None
    return {"type": "response_item", "payload": value}


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """The one trace of a rollout file's records; a line that cannot be read is a problem.

    A ``codex exec --json`` stream (its first record one of its events) is read by
    :func:`codex_exec.convert_records`.
    """
    first, rest = first_record(records)
    if first is not None and codex_exec.recognises(first.value):
        yield from codex_exec.convert_records(rest, options)
        return
    session: _Session | None = None
    for item in rest:
        if isinstance(item, Problem):
            yield item
            continue
        session = session or _Session(item)
        try:
            _tell(session, item)
        except PathError as error:
            yield item.problem(error.path, error.message)
    if session is not None:
        yield finished(partial(_finish, session, options), session.first)


def _tell(session: _Session, record: Record) -> None:
    value = _enveloped(session, record.value)
    if value is None:
        return
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise PathError(
            (),
            f"not a Codex rollout line: {describe_value(value)}; expected "
            f"{{timestamp, type: {'|'.join(sorted(LINES))}, payload: {{...}}}}",
        )
    if not isinstance(value.get("payload"), dict):
        raise PathError(
            ("payload",), f"expected an object, found {describe_value(value.get('payload'))}"
        )
    payload = value["payload"]
    session.started = session.started or iso_time(value.get("timestamp"))
    turn_model = payload.get("model") if value["type"] == "turn_context" else None
    session.model = as_string(turn_model) or session.model
    if value["type"] == "session_meta" and session.id is None:
        found = payload.get("id")
        session.id = non_empty(found)
        version = payload.get("cli_version")
        session.version = as_string(version)
        session.started = iso_time(payload.get("timestamp")) or session.started
        session.system = non_blank(content_text([payload.get("base_instructions")]))
    elif value["type"] == "event_msg":
        _tell_event(session, payload)
    elif value["type"] == "response_item" and (item := _request(payload)) is not None:
        kind = item.get("type")
        if isinstance(kind, str) and kind.endswith("_call_output"):
            item = {**item, "output": _output(item.get("output"))}
        session.items.append(item)


def _tell_event(session: _Session, payload: Mapping[str, Any]) -> None:
    """An ``event_msg``: the user's words, a rollback, a turn's error, a completed item."""
    kind = payload.get("type")
    if kind == "user_message":
        said = payload.get("message")
        if isinstance(said, str) and not _CONTEXT.match(said):
            session.said = session.said or _users_words(said)
            session.asked.append((len(session.items), _users_words(said)))
    elif kind == "thread_rolled_back":
        session.rolled_back = True
        for items in (session.items, session.completed):
            _roll_back(items, payload.get("num_turns"))
    elif kind == "error":  # the turn's request failed: where it came, among either's items
        failed = {"type": "error", "message": payload.get("message")}
        session.items.append(failed)
        session.completed.append(failed)
    elif kind == "item_completed":
        item = payload.get("item")
        if isinstance(item, dict):
            session.completed += [
                told for found in _completed(item) if (told := _request(found)) is not None
            ]


def _with_requests(session: _Session) -> list[Mapping[str, Any]]:
    """The session's items, with the user's turns where no user item holds them.

    Codex Desktop's rollouts (as codemie-code keeps them) hold the user's requests only as
    ``event_msg`` ``user_message`` lines: each is put back as a user message where it came, so
    that the requests after the first are the user's replies, not lost.
    """
    items = session.items
    if not items or session.rolled_back or any(_is_users(item) for item in items):
        return items
    told = list(items)
    for at, words in reversed(session.asked):
        told.insert(at, {"type": "message", "role": "user", "content": _typed(words)})
    return told


def _is_users(item: Mapping[str, Any]) -> bool:
    return item.get("type") == "message" and item.get("role") == "user"


def _typed(words: str) -> list[dict[str, str]]:
    return [{"type": "input_text", "text": words}]


def _roll_back(items: list[Mapping[str, Any]], turns: Any) -> None:
    """Drop the last ``turns`` user turns, as Codex rebuilds a thread the user rolled back.

    Its ``drop_last_n_user_turns``: the items from the ``turns``-th user message from the end
    on are gone from the thread (all but what came before the first user message, when it asks
    for more turns than there are); the turns after the ``thread_rolled_back`` line go on from
    there, so the dropped ones are no part of the run, as Gemini CLI's rewound messages are not.
    """
    if not isinstance(turns, int) or isinstance(turns, bool) or turns <= 0:
        return
    users = [
        at
        for at, item in enumerate(items)
        if item.get("type") == "message" and item.get("role") == "user"
    ]
    if users:
        del items[users[0] if turns >= len(users) else users[-turns] :]


def _completed(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A completed turn item (an ``item_completed`` event's) as the Responses items it stands for.

    ``[]`` for another kind (``Plan``, ``Sleep``...): no rollout found shows what it holds.
    """
    kind = item.get("type")
    parts = _listed(item.get("content"))
    texts = [part.get("text") for part in parts if isinstance(part, dict)]
    text = "\n".join(t for t in texts if isinstance(t, str))
    if kind in ("UserMessage", "AgentMessage"):
        user = kind == "UserMessage"
        part = {"type": "input_text" if user else "output_text", "text": text}
        return [{"type": "message", "role": "user" if user else "assistant", "content": [part]}]
    if kind == "Reasoning":
        summary = _listed(item.get("summary_text"))
        said = [{"type": "summary_text", "text": t} for t in summary if isinstance(t, str)]
        return [{"type": "reasoning", "summary": said}]
    if kind == "CommandExecution":
        call_id = as_string(item.get("id"))
        output: Any = item.get("stdout")
        if item.get("exit_code") not in (0, None) or item.get("status") in ("failed", "declined"):
            output = {"error": output or TOOL_FAILED}
        return [
            {
                "type": "function_call",
                "name": "shell",
                "call_id": call_id,
                "arguments": {"command": item.get("command")},
            },
            {"type": "function_call_output", "call_id": call_id, "output": output},
        ]
    return []


def _listed(value: Any) -> list[Any]:
    """A list as it is; anything else as no element."""
    return value if isinstance(value, list) else []


def _request(item: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An item as the model was given it, but a user message as the user wrote it.

    The parts Codex wrote itself (the environment, instructions, the tags around an attached
    image) and the IDE extension's context are left out; ``None`` for a message Codex wrote all
    of.
    """
    if item.get("type") != "message" or item.get("role") != "user":
        return item
    content = item.get("content")
    parts = content if isinstance(content, list) else [content]
    kept = [
        part
        for part in parts
        if (text := content_text([part], _OUTPUT_TEXT)) is None
        or not (_CONTEXT.match(text) or _IMAGE_TAG.fullmatch(text))
    ]
    if not kept:
        return None
    text = content_text(kept, _OUTPUT_TEXT)
    if text is not None and _IDE_REQUEST in text:
        return {**item, "content": [{"type": "input_text", "text": _users_words(text)}]}
    return item if len(kept) == len(parts) else {**item, "content": kept}


_CONTEXT_BLOCKS = re.compile(
    r"(?:\s*(?:<([a-z_ ]+)>[\s\S]*?</\1>"
    r"|# AGENTS\.md instructions for [^\n]*\n[\s\S]*?<INSTRUCTIONS>[\s\S]*?</INSTRUCTIONS>))+\s*"
)
"""Codex's own parts of a user message (:data:`_CONTEXT`) one after another: a message whose
parts a converter joined into one text."""


def codex_users_words(text: str) -> str | None:
    """A user message's words where Codex may have written it, ``None`` where it wrote it all.

    Its environment context and AGENTS.md instructions (alone, or joined into one text, as a
    trajectory converted from a rollout keeps them) are not the user's; the IDE extension's
    context around the request is left out.
    """
    if _CONTEXT.match(text) or _CONTEXT_BLOCKS.fullmatch(text):
        return None
    return _users_words(text)


def _users_words(text: str) -> str:
    """A user's text without the IDE extension's context around it (open tabs, files)."""
    return text.split(_IDE_REQUEST, 1)[1].strip() if _IDE_REQUEST in text else text


def _output(output: Any) -> Any:
    """A tool output as its text; an ``{"error": text}`` object when it says it failed.

    Codex writes the text, ``{"content", "success"}``, content items, or JSON text holding the
    command's ``output`` and ``metadata.exit_code``.
    """
    failed = False
    if isinstance(output, dict) and "content" in output:
        failed = output.get("success") is False
        output = output["content"]
    if isinstance(output, dict | list):
        output = content_text(output if isinstance(output, list) else [output], _OUTPUT_TEXT)
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
            failed = failed or parsed["metadata"].get("exit_code") not in (0, None)
            output = parsed.get("output", output)
    if isinstance(output, str) and (code := _EXIT_CODE.match(output)) is not None:
        failed = failed or code.group(1) != "0"
    if isinstance(output, str) and _REFUSED.match(output) is not None:
        failed = True
    return {"error": output or TOOL_FAILED} if failed else output


def _finish(session: _Session, options: TraceOptions) -> TraceItem:
    builder = StepBuilder()
    responses = any(item.get("type") != "error" for item in session.items)
    told = openai_responses.tell(
        _with_requests(session) if responses else session.completed, builder
    )
    location = session.first.location
    return assemble(
        builder,
        source="codex",
        source_id=session.id or Path(location.file).stem,
        success=told.answered and builder.final_answer is not None,  # no user turn after it
        options=options,
        objective=told.objective or session.said,
        created_at=session.started,
        result_summary=builder.final_answer,
        agent_id="codex",
        framework="codex",
        model=session.model,
        source_extra={"version": session.version} if session.version else None,
        content_hint=CONTENT_HINT,
        system=session.system,
        location=Location(location.file, location.line),
    )
