"""The step rules every source shares: order, merging by call id, the error rule, bounds.

A source reader (OTel spans, LangChain runs, Agents spans, smolagents steps, Pydantic AI
messages) tells a :class:`StepBuilder` what happened, in any order: thoughts, tool calls the model
requested, tool executions and their results, the final answer. The builder turns that into the
``steps`` of a ``ReasoningTrace`` by the rules of ``docs/integrations.md``:

* order by start time; ties, and events with no time, keep the order they were told in (tree
  order), an event with no time sitting after the event told before it; a tool's observation
  follows its call, or, where steps of another turn started while it ran (an agent called as a
  tool), them, at the tool's end (known from its start and latency);
* a requested tool call and its execution are one ``tool_call`` step, matched by call id (the
  latest call of that id; a request, or a distinct execution, that reuses the id of a call
  already requested, or executed, is a new call), else by tool name in order, the names compared
  as a model API is given them (:func:`name_key`); a request that never ran is still a
  ``tool_call``;
* a failed tool call's result is an ``observation`` carrying the error text, and the agent's
  next action after it is an ``error_recovery`` (it keeps its tool). The failure itself is never
  typed ``error_recovery``: that would reward failing; nor is a call the model asked for in the
  same turn as the failed one (a parallel sibling), which was issued before the error was seen.
  Requests told one after another at one time (or all untimed), nothing else told between them,
  are one model turn: every source tells a turn's calls together, at the turn's time;
* a user's turn after the objective is the user answering the agent: the assistant text told
  just before it is a ``respond`` call (what the agent said to the user) and the turn its
  ``observation``, as tau-bench records a conversation; with no such text (the user speaks after
  a tool call, or again) the turn is an ``observation`` of ``respond`` on its own. An answer a
  user turn follows was no final answer: it is that ``respond`` call;
* step content is cut at 8 KB, ``output_summary`` at 500 characters; ``input`` is a JSON object
  when one can be read (JSON, or the repr of a Python dict), else ``{"_raw": "<text>"}``.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import io
import json
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from knowledgepulse._util.text import grapheme_end, utf8_prefix
from knowledgepulse.records.json_values import parsed_json, python_literal

if TYPE_CHECKING:
    from knowledgepulse.trace.models import Step

MAX_CONTENT_BYTES = 8192
"""Step content is cut to this many UTF-8 bytes (the corpora's bound)."""
MAX_OUTPUT_SUMMARY = 500
"""``output_summary`` is cut to this many characters."""
TOOL_FAILED = "the tool failed"
"""The error text of a failed tool call whose source records none."""
RESPOND = "respond"
"""The tool a message to the user is a call of, the user's reply its observation (tau-bench's)."""
MODEL_CALL_FAILED = "model call failed: "
"""What the error of a failed model call opens with (the error the API answered with follows):
the model never saw it, only the agent running it (which may call the model again)."""


def newest_request(said: Sequence[str | None], worked: Sequence[bool]) -> str | None:
    """The user's request of a model input's newest turn, from each turn's two facts.

    ``said``: each turn's user text (``None`` for a turn not the user's, or empty); ``worked``:
    whether the turn is the run's work (the model's message, a call, a tool's output). The
    request is the first user text after the last work before the last user text: a later
    turn of a conversation is sent with the turns before it (a GenAI request's history, an
    Agents SDK run given ``to_input_list()``, a graph without a checkpointer), and what that
    run was asked is the newest question, not the conversation's first.
    """
    asked = [index for index, text in enumerate(said) if text]
    if not asked:
        return None
    answered = [index for index in range(asked[-1]) if worked[index]]
    start = answered[-1] + 1 if answered else 0
    return next(said[index] for index in asked if index >= start)


def failed_model_call(step: Step) -> bool:
    """Whether a step is the error of a failed model call (:data:`MODEL_CALL_FAILED`)."""
    return step.type == "observation" and (step.content or "").startswith(MODEL_CALL_FAILED)


def says_more_than_the_call(step: Step) -> bool:
    """Whether a call's step text is more than the call: it does not start with the tool's name.

    A reader writes a call's text as its name and arguments (``search {"q": "x"}``), and traces
    that describe a call name it first (``financial_data_api(ticker=TSM)``); any other text is
    what the agent said with the call (a ``respond`` call's message to the user), which the
    call's arguments do not hold: a writer keeps it where its format can.
    """
    assert step.tool is not None  # the caller passes tool calls only
    text = (step.content or "").strip()
    return bool(text) and not text.startswith(step.tool.name)


CUT_MARK = "…"
"""What ends a text :func:`bounded` or :func:`summary` cut (``kp inspect`` finds it by it)."""

Timestamp = datetime | float | None
"""When an event started: a datetime, Unix seconds, or unknown."""


# Where a token ends, as the redaction rules read one. A cut inside a token goes back to the
# token's start: a secret or an e-mail address straddling the limit is dropped whole, never
# kept in part where no rule can recognise it (the trace is redacted after it is converted).
_TOKEN_END = r"\s'\"`,;)}\]"
_IN_TOKEN = re.compile(rf"[^{_TOKEN_END}]")
_LAST_TOKEN = re.compile(rf"[{_TOKEN_END}][^{_TOKEN_END}]*\Z")


def _cut(text: str, head: str) -> str:
    """``head``, a prefix of ``text``, less a token it splits (unless that token is all of it)."""
    if _IN_TOKEN.match(text, len(head)) and (last := _LAST_TOKEN.search(head)):
        return head[: grapheme_end(text, last.start() + 1)]  # a space may carry an accent
    return head


def bounded(text: str, max_bytes: int | None = MAX_CONTENT_BYTES) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, between tokens, marked ``…``.

    A text of one token (Chinese or Japanese, written without spaces) is cut between graphemes.
    ``None``: the text whole.
    """
    # No character takes more than 4 bytes: a short text has nothing to cut.
    if max_bytes is None or len(text) * 4 <= max_bytes:
        return text
    if len(text.encode("utf-8", "surrogatepass")) <= max_bytes:
        return text
    return _cut(text, utf8_prefix(text, max_bytes - len(CUT_MARK.encode()))) + CUT_MARK


def summary(text: str, max_chars: int = MAX_OUTPUT_SUMMARY) -> str:
    """``text`` cut to at most ``max_chars`` characters, between tokens, marked ``…`` when cut."""
    if len(text) <= max_chars:
        return text
    return _cut(text, text[: grapheme_end(text, max_chars - 1)]) + CUT_MARK


def as_text(value: Any) -> str:
    """A tool output or message content as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return ""  # binary parts are dropped
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        try:
            return str(value)
        except ValueError:  # an integer too long to print
            return type(value).__name__


def as_input(value: Any) -> dict[str, Any] | None:
    """A tool's arguments as a JSON object: a dict, JSON text or a dict's repr, else ``_raw``."""
    if value is None:
        return None
    if isinstance(value, dict):
        return _jsonable(value)
    if isinstance(value, str):
        try:  # a NaN is no JSON; a lone surrogate reads as U+FFFD (parsed_json)
            parsed = parsed_json(value)
        except (ValueError, RecursionError):
            parsed = python_dict(value)
            if parsed is None:
                return {"_raw": value} if value else None
        if isinstance(parsed, str) and parsed.lstrip().startswith("{"):
            # The object's JSON text encoded once more (json.dumps applied twice, as some of
            # OpenAI's cookbook fine-tuning rows have it): the arguments are still that object.
            with contextlib.suppress(ValueError, RecursionError):
                parsed = parsed_json(parsed)
        return parsed if isinstance(parsed, dict) else {"_raw": value}
    return {"_raw": as_text(value)}


def _arguments(kept: Any, told: Any, *, replace: bool) -> Any:
    """A call's arguments, of those it kept and those told of it now (its request, or its run).

    The ones told now win (``replace``: the tool's run tells what the tool got), else the ones
    kept; but arguments that read as an object win over ones that read as no object (``_raw``):
    LangChain's tool span records a one-argument tool's input as its bare value (``Tokyo``),
    where the model asked ``{"city": "Tokyo"}``.
    """
    if told is None or kept is None or told == kept:
        return kept if told is None else told
    raw_told, raw_kept = _is_raw(told), _is_raw(kept)  # each parses its arguments: once
    if raw_told != raw_kept:
        return kept if raw_told else told
    return told if replace else kept


def _is_raw(arguments: Any) -> bool:
    read = as_input(arguments)
    return read is not None and set(read) == {"_raw"}


def python_dict(text: str) -> dict[str, Any] | None:
    """A Python dict's repr (a literal only) as a JSON object; else ``None``.

    LangChain's tools record their input as ``str(dict)`` (so Langfuse's and OpenInference's
    spans hold it): the call's arguments, not text.
    """
    if not text.lstrip().startswith("{"):
        return None
    try:  # read safely: a literal only, never code
        parsed = python_literal(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and all(isinstance(k, str) for k in parsed) else None


def python_fields(text: str) -> dict[str, Any] | None:
    """A pydantic model's ``str()`` (``status='failure' result=None error='...'``) as an object.

    Pydantic writes a model as its fields, ``name=repr(value)`` a space apart, no class name:
    Agno's tool spans, as OpenLLMetry records them, keep ``str(FunctionExecutionResult)`` as a
    tool's output. Two fields at least, each value a Python literal (read safely, never code),
    else ``None``: text that merely holds an ``=`` is not read as fields.
    """
    if _FIELD_START.match(text) is None or "\n" in text:  # a repr is one line
        return None
    found = printed_fields(text)
    if found is None or len(found) < 2 or found[0][1] != 0:
        return None
    fields: dict[str, Any] = {}
    for name, _, value in found:
        if _OBJECT_REPR.fullmatch(value):
            # An object Python writes by its address (``<generator object ... at 0x...>``: an
            # Agno tool that streams, its team's delegation): its value was never recorded.
            fields[name] = None
            continue
        try:
            fields[name] = python_literal(value)
        except ValueError:
            return None
    return fields


def printed_fields(text: str) -> list[tuple[str, int, str]] | None:
    """The top-level ``name=value`` fields of a one-line text, as a pydantic model's ``str()``.

    Each field's name, where it starts, and its value's text; ``None`` when the text does not
    tokenize as Python.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    starts: list[tuple[str, int, int]] = []  # name, where the name starts, where its value does
    depth = 0
    for here, token in enumerate(tokens[:-1]):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif depth == 0 and token.type == tokenize.NAME and tokens[here + 1].string == "=":
            starts.append((token.string, token.start[1], tokens[here + 1].end[1]))
    ends = [start for _, start, _ in starts[1:]] + [len(text)]
    return [
        (name, start, text[value_start:end].strip())
        for (name, start, value_start), end in zip(starts, ends, strict=True)
    ]


_OBJECT_REPR = re.compile(r"<\w[^\n]* at 0x[0-9a-fA-F]+>")
"""Python's default ``repr`` of an object: its kind and name, then its address."""


_FIELD_START = re.compile(r"[a-z_]\w*=")
"""Where a pydantic model's ``str()`` starts: its first field's name."""


def _jsonable(value: dict[Any, Any]) -> dict[str, Any]:
    # Live objects may hold anything (datetimes, pydantic models): keep what JSON can say.
    try:
        loaded: dict[str, Any] = parsed_json(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError, RecursionError):  # a tuple key, a NaN, a huge integer
        return {"_raw": as_text(value)}
    return loaded


def _seconds(at: Timestamp) -> float | None:
    if isinstance(at, datetime):
        return at.timestamp()
    return at


@dataclass(slots=True)
class _ToolEvent:
    name: str
    call_id: str | None
    arguments: Any = None
    output: Any = None
    error: str | None = None
    latency_ms: float | None = None
    mcp_server: str | None = None
    returned: bool = False  # the source records the tool's return, which may be null
    requested: bool = False
    executed: bool = False
    text: str | None = None  # the step's text, when the source gave one (else name and input)
    turn: int | None = None  # the model turn that asked for it (None: no request was told)
    ended: float | None = None  # when its execution ended, where its start and latency are told
    answered: int | None = None  # how many events were told when its result came


@dataclass(slots=True)
class _Event:
    at: float | None
    seq: int
    text: str | None = None
    tool: _ToolEvent | None = None
    error: str | None = None
    terminal: bool = False
    said: bool = False  # assistant text to the user (no reasoning): a user turn may answer it
    user: str | None = None  # a user's turn that no assistant text came before


_Flag = Literal["requested", "executed"]
_Waiting = dict[tuple[_Flag, str, bool], list[tuple[int, _Event]]]
"""Tool events by flag not yet set, name key and whether they have a call id: heaps by told
order."""


@functools.lru_cache(maxsize=4096)  # a run's few tool names, asked at every request and result
def name_key(name: str) -> str:
    """A tool's name as a request and its execution are matched by: letters and digits, casefolded.

    Frameworks give the model a tool's name made safe for the API and run the tool by its own:
    crewAI offers ``Delegate work to coworker`` as ``delegate_work_to_coworker`` (and earlier as
    ``Delegate_work_to_coworker``), and its tool span names the tool as written. A name with no
    letter or digit is its own key.
    """
    return "".join(char for char in name.casefold() if char.isalnum()) or name


@dataclass
class StepBuilder:
    """Collects what a source recorded and turns it into ``ReasoningTrace`` steps."""

    _events: list[_Event] = field(default_factory=list)
    _answer: str | None = None
    _answer_said: bool = False  # whether the answer is assistant text (no output tool's)
    answer_is_step: bool = True
    """Whether the final answer is also the last ``thought`` step (a row kp wrote may say no)."""
    written_by_kp: bool = False
    """Whether the row is one kp wrote (``--to messages``): no thought repeats the answer (none
    is dropped as a repeat), and a call in it with no tool name is its trace's (read from a
    source with a warning), not a broken row."""
    failed_calls: frozenset[str] | None = None
    """The call ids whose result was an error, where the source says (a row kp wrote); else a
    result's text says whether it failed."""
    call_texts: frozenset[str] = frozenset()
    """The call ids whose assistant turn's text is the call's own step text (a row kp wrote)."""
    error_turns: frozenset[int] = frozenset()
    """The user turns after the objective (numbered from 0) that are errors, no words of the
    user's (a row kp wrote)."""
    step_types: tuple[str, ...] = ()
    """Each step's type as the source recorded it (a trajectory kp wrote, whose format has no
    error flag): used where it fits the steps built, one type a step, differing only in which
    tool calls and thoughts are ``error_recovery``; else the steps built stay as built."""
    request_parts: list[str] = field(default_factory=list)
    """The user's turns told before the agent said or did anything: the rest of the request,
    joined to the objective (:func:`~knowledgepulse.sources._envelope.assemble`)."""
    _user_turns: int = 0
    _seen_text: bool = False
    _request_told: bool = False  # the request is whole: a user's turn is a reply
    # Indexes of the tool events, so that matching a call costs the same in a trace of 100,000.
    _by_call_id: dict[str, _Event] = field(default_factory=dict)
    _waiting: _Waiting = field(default_factory=dict)
    _unanswered_from: int = 0  # no event before this index is a tool call still unexecuted
    _turns: int = 0  # model turns told so far (see tool_request)
    _in_turn: bool = False  # whether the last thing told was a request (its turn still open)
    _turn_at: float | None = None  # the time of the open turn's requests
    _answer_turn: int | None = None  # the model turn the answer was said in, with its requests

    def thought(self, text: str | None, *, at: Timestamp = None, said: bool = False) -> None:
        """Model reasoning, a plan, or assistant text that is not the final answer.

        ``said``: the assistant's text to the user (not reasoning), which a user turn told next
        answers (:meth:`user_turn`).
        """
        self._in_turn = False
        if text and text.strip():
            self._seen_text = True
            self._events.append(_Event(_seconds(at), len(self._events), text=text, said=said))

    def answer(self, text: str | None, *, at: Timestamp = None, said: bool = True) -> None:
        """The final answer: the last ``thought`` step and the outcome's ``result_summary``.

        A later call replaces an earlier one (the last answer is the final one); a user turn
        told after it makes it no answer (:meth:`user_turn`). ``said``: assistant text (not an
        output tool's arguments).
        """
        self._in_turn = False
        if text and text.strip():
            self._seen_text = True
            self._answer, self._answer_said = text, said

    def answer_in_this_turn(self) -> None:
        """The answer was said in the model turn whose requests were just told.

        Pydantic AI's ``run_stream`` ends on the first text the model streams, and still runs
        the tools that turn asked for: the answer was said before their errors were seen, so,
        like a parallel sibling, it recovers none of them.
        """
        self._answer_turn = self._turns if self._in_turn else None

    def user_turn(self, text: str | None, *, at: Timestamp = None) -> None:
        """A user's turn after the objective: the user's words, answering the agent.

        The assistant text told just before it (the answer too: an answer the user replies to
        is none) becomes a ``respond`` call, what the agent said to the user, and this turn its
        result; with no such text (the user speaks after a tool call, or again) the turn is an
        observation of ``respond`` on its own. Told before the agent said or did anything, it
        is the rest of the request (:attr:`request_parts`). Never an error: the user's words
        are no tool's (but in a row kp wrote of an error met outside a tool,
        :attr:`error_turns`).
        """
        number, self._user_turns = self._user_turns, self._user_turns + 1
        self._in_turn = False
        if number in self.error_turns:
            # kp writes the answer last: text an error follows was a thought, the run went on.
            self._answer_told_as_step()
            self.error(text)
            return
        if not (text and text.strip()):
            return
        self._seen_text = True
        if not (
            self._events or self._answer is not None or self._request_told or self.written_by_kp
        ):
            # Nothing said or done since the request: the user goes on with it (a document,
            # then the question on it; Inspect's input of two messages), no reply to the agent.
            # kp writes the whole request as one turn: in its rows, the next is a reply.
            self.request_parts.append(text)
            return
        self._answer_told_as_step()
        last = self._events[-1] if self._events else None
        if last is not None and last.said and last.tool is None:
            last.tool = _ToolEvent(
                RESPOND, None, requested=True, executed=True, output=text, text=last.text
            )
            last.text, last.said = None, False
            return
        self._events.append(_Event(_seconds(at), len(self._events), user=text))

    def request_told(self) -> None:
        """The request is whole: what the user says from now on answers the agent.

        A user's turn before the agent said or did anything is the rest of the request, unless
        the source knows the request ended: Roo Code's condensation replaced the agent's turns
        after the task by their summary (the user's feedback after it answers the completion
        the summary stands for); kp writes the whole request as ATIF's first user step.
        """
        self._request_told = True

    def no_answer(self) -> None:
        """The answer told so far was none (the run failed after it): a thought, where told."""
        self._answer_told_as_step()

    def _answer_told_as_step(self) -> None:
        """The answer told so far, if any, as a step where it was told: it was no answer."""
        if self._answer is not None:
            answer, said = self._answer, self._answer_said
            self._answer = None
            self._events.append(_Event(None, len(self._events), text=answer, said=said))

    def error(self, text: str | None, *, at: Timestamp = None, terminal: bool = False) -> None:
        """An evident error that belongs to no tool call (a parse error, a rejected output).

        It is an ``observation`` carrying the text, and the next action is its
        ``error_recovery``. A ``terminal`` error (out of steps, say) ends the run: what follows
        it (a forced final answer) recovers nothing.
        """
        self._in_turn = False
        if text and text.strip():
            self._seen_text = True
            event = _Event(_seconds(at), len(self._events), error=text, terminal=terminal)
            self._events.append(event)

    @property
    def final_answer(self) -> str | None:
        """The final answer told so far, if any."""
        return self._answer

    @property
    def error_texts(self) -> list[str]:
        """The text of each error told: evident errors and failed tool calls' results."""
        return [
            text
            for event in self._events
            if (text := event.error or (event.tool.error if event.tool else None))
        ]

    @property
    def saw_text(self) -> bool:
        """Whether any message text (not just names and timings) was recorded."""
        return self._seen_text

    def tool_request(
        self,
        name: str,
        arguments: Any = None,
        *,
        call_id: str | None = None,
        at: Timestamp = None,
        text: str | None = None,
        mcp_server: str | None = None,
    ) -> None:
        """A tool call the model asked for; merged with its execution when one is told.

        ``text``: the step's own text (what the agent said with the call), where the source
        keeps one; else the step's text is the call's name and arguments. ``mcp_server``: the
        MCP server that has the tool, where the call names it.
        """
        when = _seconds(at)
        if not self._in_turn or when != self._turn_at:  # told after anything else, or later
            self._turns, self._in_turn, self._turn_at = self._turns + 1, True, when
        event = self._matching(name, call_id, flag="requested")
        if event is None:
            event = self._new_tool(name, call_id, at)
        tool = _tool(event)
        tool.turn = self._turns
        if call_id is not None and tool.call_id is None and call_id not in self._by_call_id:
            # An execution that named no call, joined by name: the call is known by the
            # request's id from now on (the tool result a later model call is given names it).
            tool.call_id = call_id
            self._by_call_id[call_id] = event
        tool.requested = True
        tool.arguments = _arguments(tool.arguments, arguments, replace=False)
        if text and text.strip():
            self._seen_text = True
            tool.text = text
        if mcp_server:
            tool.mcp_server = mcp_server

    def tool_result(
        self,
        name: str,
        *,
        arguments: Any = None,
        output: Any = None,
        error: str | None = None,
        call_id: str | None = None,
        at: Timestamp = None,
        latency_ms: float | None = None,
        mcp_server: str | None = None,
        distinct: bool = False,
        returned: bool = False,
        inside_until: Timestamp = None,
        sent_at: Timestamp = None,
    ) -> None:
        """A tool's execution and its result (``error``: the failure's text, when it failed).

        ``inside_until``: when the last step that ran inside the tool ended (an agent called as
        a tool), where that is later than the tool's own end: the observation follows them.

        ``sent_at``: when the model call the result was sent to started, where only that call
        tells the result (no end of the tool's own): the tool had ended by then, so its
        observation follows what started while it ran (a coworker's steps, crewAI delegating
        with no tool span traced), not its call.

        ``returned``: the source records the tool's return itself, even a null one (Pydantic
        AI's ``tool-return`` whose ``content`` is ``null``, a tool that returns nothing): the
        model was sent a result (Pydantic AI sends ``null``), so an ``observation`` is written,
        ``null`` its text. Without it a null output is no result (a handoff: nothing came back,
        or a call that never ran).

        It joins the request with the same call id, else the first request of that name not yet
        executed; its own start time, when known, places the merged step. A ``distinct``
        execution (a tool span of its own) never joins a call already executed: two executions
        that share a call id are two calls. A negative ``latency_ms`` (an end before the start)
        is unknown.
        """
        self._in_turn = False
        if output is not None or error:
            self._seen_text = True
        event = self._matching(name, call_id, flag="executed", distinct=distinct)
        if event is None:
            event = self._new_tool(name, call_id, at)
        elif at is not None:
            event.at = _seconds(at)
        tool = _tool(event)
        tool.executed = True
        tool.answered = len(self._events)
        if name and name != tool.name:
            tool.name = name
            self._wait(event, "requested")  # a request may still join it, by its new name
        tool.arguments = _arguments(tool.arguments, arguments, replace=True)
        if output is not None:
            tool.output = output
        tool.returned = tool.returned or returned
        if error:
            tool.error = error
        # An end before the start (clocks of two machines apart) tells no duration: unknown,
        # as a source with no end says, not a made-up 0.
        if latency_ms is not None and latency_ms >= 0:
            tool.latency_ms = latency_ms
            start = _seconds(at)
            tool.ended = None if start is None else start + tool.latency_ms / 1000
        # What ran inside the tool ran before its result came back, whatever the clocks say: a
        # sub-agent's spans written on another machine's clock may end after the tool's own.
        inner = _seconds(inside_until)
        if (
            inner is not None
            and _seconds(at) is not None
            and (tool.ended is None or tool.ended < inner)
        ):
            tool.ended = inner
        sent = _seconds(sent_at)
        if sent is not None and tool.ended is None:
            tool.ended = sent
        if mcp_server:
            tool.mcp_server = mcp_server

    @property
    def awaits_result(self) -> bool:
        """Whether a call the model asked for has had no execution told yet."""
        return self._first_unanswered() is not None

    def executed(self, call_id: str) -> bool:
        """Whether the call of that id has had its execution told (by id, or joined by name)."""
        event = self._by_call_id.get(call_id)
        return event is not None and _tool(event).executed

    def _new_tool(self, name: str, call_id: str | None, at: Timestamp) -> _Event:
        event = _Event(_seconds(at), len(self._events), tool=_ToolEvent(name, call_id))
        self._events.append(event)
        if call_id is not None:
            self._by_call_id[call_id] = event  # the latest call of that id is the one answered
        self._wait(event, "requested")
        self._wait(event, "executed")
        return event

    def _wait(self, event: _Event, flag: _Flag) -> None:
        tool = _tool(event)
        key = (flag, name_key(tool.name), tool.call_id is not None)
        heapq.heappush(self._waiting.setdefault(key, []), (event.seq, event))

    def _matching(
        self, name: str, call_id: str | None, *, flag: _Flag, distinct: bool = False
    ) -> _Event | None:
        """The tool event a request or an execution joins: same call id, else same name.

        By name, only an event not yet ``flag`` (requested, or executed) and whose call id does
        not differ from ``call_id`` qualifies, the earliest first.
        """
        if call_id is not None and call_id in self._by_call_id:
            event = self._by_call_id[call_id]
            if _joins(_tool(event), flag, distinct=distinct):
                return event
        # An event with a call id qualifies only when this call has none; the earlier one wins.
        found = self._first_waiting(flag, name, False)
        if call_id is None:
            with_id = self._first_waiting(flag, name, True)
            if with_id is not None and (found is None or with_id.seq < found.seq):
                found = with_id
        if found is None and not name and call_id is None and flag == "executed":
            return self._first_unanswered()  # a result that names no call answers the oldest
        return found

    def _first_unanswered(self) -> _Event | None:
        """The earliest tool call not yet executed (a cursor: linear over the whole trace)."""
        while self._unanswered_from < len(self._events):
            tool = self._events[self._unanswered_from].tool
            if tool is not None and tool.requested and not tool.executed:
                return self._events[self._unanswered_from]
            self._unanswered_from += 1
        return None

    def _first_waiting(self, flag: _Flag, name: str, with_call_id: bool) -> _Event | None:
        """The earliest event of that name not yet ``flag``; those flagged or renamed dropped."""
        key = name_key(name)
        waiting = self._waiting.get((flag, key, with_call_id), [])
        while waiting and (
            getattr(tool := _tool(waiting[0][1]), flag) or name_key(tool.name) != key
        ):
            heapq.heappop(waiting)  # each entry leaves once: linear over the whole trace
        return waiting[0][1] if waiting else None

    def steps(self, limit: int | None = MAX_CONTENT_BYTES) -> list[dict[str, Any]]:
        """The ``steps`` array, numbered from 0, the final answer last.

        Each step's text is cut to ``limit`` UTF-8 bytes (:func:`bounded`); ``None`` keeps it
        whole.

        The action after an evident error is its ``error_recovery``: the next tool call, or,
        when no tool call follows, the next thought (the final answer included); a thought that
        another error follows is the recovery that failed. A call of the failed call's own model
        turn (a parallel sibling) was asked for before the error was seen: no recovery, and the
        error still waits for the agent's next action. An error with nothing after it is
        terminal: no step is a recovery.

        A tool's ``observation`` follows its call, unless steps started while it ran (an agent
        called as a tool, whose model and tools run inside it): then it follows them, at the
        tool's end, as its result did. A parallel sibling of its own turn is not inside it. The
        thoughts told after an untimed call and before its result (the agent's text after the
        call in its message) come before its observation, as they came.
        """
        steps: list[dict[str, Any]] = []
        after_error = False
        failed_turn: int | None = None  # the model turn of the failed call the error is from
        reply: int | None = None  # the first thought after the pending error
        running: list[_ToolEvent] = []  # tools whose observation waits for their end

        def observe(tool: _ToolEvent) -> None:
            nonlocal after_error, failed_turn
            if not tool.error and tool.output is None and not tool.returned:
                return  # nothing came back (a handoff): no observation
            steps.append(_observation(_result_text(tool), tool.name, tool.mcp_server))
            if tool.error:
                after_error, failed_turn = True, tool.turn

        def ended_by(at: float, turn: int | None, place: int) -> None:
            """Observe the tools ended by ``at``, of ``turn`` (siblings), or held to ``place``."""
            if not running:
                return
            done = [
                t
                for t in running
                if _ended_by(t, at)
                or (turn is not None and t.turn == turn)
                or held.get(id(t), place + 1) <= place
            ]
            for tool in sorted(done, key=lambda t: t.ended or 0.0):
                running.remove(tool)
                observe(tool)

        ordered = self._in_order()
        held = _held_results(ordered)  # id(tool) -> the place its observation waits for
        for place, (at, event) in enumerate(ordered):
            ended_by(at, event.tool.turn if event.tool is not None else None, place)
            if event.error is not None:
                if after_error and reply is not None:  # the reply tried, and failed again
                    steps[reply]["type"] = "error_recovery"
                steps.append(_observation(event.error))
                after_error, reply, failed_turn = not event.terminal, None, None
            elif event.user is not None:  # answering no message of the agent's
                steps.append(_observation(event.user, RESPOND))
            elif event.tool is None:
                reply = len(steps) if after_error and reply is None else reply
                steps.append({"type": "thought", "content": event.text or ""})
            else:
                tool = event.tool
                sibling = after_error and tool.turn is not None and tool.turn == failed_turn
                steps.append(_tool_step(tool, recovery=after_error and not sibling))
                if not sibling:
                    after_error, reply, failed_turn = False, None, None
                if (tool.ended is not None and tool.turn is not None) or id(tool) in held:
                    running.append(tool)  # observed at its end, after what ran inside it
                else:
                    observe(tool)
        ended_by(float("inf"), None, len(ordered))
        after_error, reply = self._answer_step(steps, after_error, reply, failed_turn)
        if after_error and reply is not None:
            steps[reply]["type"] = "error_recovery"
        _take_recorded_types(self.step_types, steps)
        return [
            {"step_id": number, **step, "content": bounded(step["content"], limit)}
            for number, step in enumerate(steps)
        ]

    def _answer_step(
        self,
        steps: list[dict[str, Any]],
        after_error: bool,
        reply: int | None,
        failed_turn: int | None,
    ) -> tuple[bool, int | None]:
        """The final answer as the last thought step, when it is one; the error state after it.

        ``after_error``, ``reply`` and ``failed_turn``: as :meth:`steps` has them after the
        other steps. An answer of a failed call's own model turn recovers nothing.
        """
        if self._answer is not None and self.answer_is_step:
            sibling = after_error and self._answer_turn is not None
            if sibling and self._answer_turn == failed_turn:
                after_error = False  # said before the error was seen: it recovers nothing
            reply = len(steps) if after_error and reply is None else reply
            steps.append({"type": "thought", "content": self._answer})
        return after_error, reply

    def _in_order(self) -> list[tuple[float, _Event]]:
        """The events to tell by start time, each with the time it is ordered by.

        An event with no time keeps its place after the one told before it; ties keep told order.
        The thoughts after the last action that only
        repeat the answer are left out: frameworks record the final answer at each level that
        passes it up (the model call, the agent, the root run): it is one answer, told once, last.
        """
        ordered: list[tuple[float, _Event]] = []
        last = float("-inf")
        timed = False
        for event in self._events:
            if event.at is not None:
                last, timed = event.at, True
            ordered.append((last, event))
        if timed:  # untimed (most dataset rows): in told order already, nothing to sort
            ordered.sort(key=lambda item: (item[0], item[1].seq))
        if self._answer is None or not self.answer_is_step or self.written_by_kp:
            return ordered
        answer = self._answer.strip()
        last_action = max(
            (n for n, (_, event) in enumerate(ordered) if event.tool is not None or event.error),
            default=-1,
        )
        return [
            (at, event)
            for n, (at, event) in enumerate(ordered)
            if n <= last_action or event.tool is not None or (event.text or "").strip() != answer
        ]


_CLOCK_SLACK_S = 1e-6
"""A start and a latency told in milliseconds give an end a rounding away from the true one."""


def _held_results(ordered: list[tuple[float, _Event]]) -> dict[int, int]:
    """The untimed calls whose result came after thoughts told after them: where it goes.

    Each call's ``id`` and the place in ``ordered`` its observation waits for: after the
    thoughts told after the call and before its result (an agent's text after the call in its
    own message, before the result came: Roo Code's cut by ``[Response interrupted...]``).
    """
    held: dict[int, int] = {}
    for place, (_, event) in enumerate(ordered):
        tool = event.tool
        if tool is None or event.at is not None or tool.answered is None:
            continue
        end = place + 1
        while end < len(ordered) and _thought_before(ordered[end][1], tool.answered):
            end += 1
        if end > place + 1:
            held[id(tool)] = end
    return held


def _thought_before(event: _Event, told: int) -> bool:
    """Whether ``event`` is an untimed thought told before ``told`` events were."""
    plain = event.tool is None and event.error is None and event.user is None
    return plain and event.at is None and event.seq < told


def _ended_by(tool: _ToolEvent, at: float) -> bool:
    """Whether ``tool`` had ended when an event starting at ``at`` started."""
    return tool.ended is not None and tool.ended <= at + _CLOCK_SLACK_S


def _joins(tool: _ToolEvent, flag: _Flag, *, distinct: bool) -> bool:
    """Whether a request or an execution with a call's id is that call (the latest of the id).

    Distinct calls may share an id (an agent that numbers its calls per turn): a second request
    is a new call, and so is a second ``distinct`` execution (a tool span of its own). A result
    told again (the tool message a model call is given) joins the call it answers.
    """
    if flag == "requested" or distinct:
        return not getattr(tool, flag)
    return True


def _take_recorded_types(recorded: tuple[str, ...], steps: list[dict[str, Any]]) -> None:
    """Give the steps built their recorded types, if these differ only in which are recoveries.

    Any other difference (a step more or less, an observation for a call, a call for a
    thought) means the file was edited since it was written: the recorded list no longer
    describes its steps, which stay.
    """
    fits = len(recorded) == len(steps) and all(
        kind == step["type"] or _recovery_or_not(kind, step)
        for kind, step in zip(recorded, steps, strict=True)
    )
    if fits:
        for kind, step in zip(recorded, steps, strict=True):
            step["type"] = kind


def _recovery_or_not(kind: str, step: dict[str, Any]) -> bool:
    """Whether ``kind`` and the step's type are the same action, one of them a recovery."""
    alike = {"tool_call", "error_recovery"} if "tool" in step else {"thought", "error_recovery"}
    return kind in alike and step["type"] in alike


def _tool(event: _Event) -> _ToolEvent:
    if event.tool is None:
        raise TypeError("not a tool event")  # the callers only pass tool events
    return event.tool


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, without building an encoder
for each call (two thirds of its time for a tool's few arguments)."""


def _tool_step(tool: _ToolEvent, *, recovery: bool) -> dict[str, Any]:
    step: dict[str, Any] = {"type": "error_recovery" if recovery else "tool_call"}
    arguments = as_input(tool.arguments)
    compact = _COMPACT.encode(arguments) if arguments else ""
    step["content"] = tool.text or f"{tool.name} {compact}".rstrip()
    step["tool"] = {"name": tool.name}
    if tool.mcp_server:
        step["tool"]["mcp_server"] = tool.mcp_server
    if arguments is not None:
        step["input"] = arguments
    if tool.error or tool.output is not None or tool.returned:
        step["output_summary"] = summary(tool.error or _result_text(tool))
    if tool.latency_ms is not None:
        step["latency_ms"] = float(tool.latency_ms)
    return step


def _result_text(tool: _ToolEvent) -> str:
    """What came back from a tool: its output, the error text first when it failed."""
    text = as_text(tool.output) if tool.output is not None else ""
    if tool.error:
        return tool.error if not text or tool.error in text else f"{tool.error}\n{text}"
    # a null the tool returned, as the JSON ``null`` it was sent as
    return as_text(None) if tool.output is None and tool.returned else text


def _observation(
    text: str, tool: str | None = None, mcp_server: str | None = None
) -> dict[str, Any]:
    """An ``observation`` step of ``text``: a tool's result, an error, a user's turn.

    A result names the server of an MCP tool as its call does: the schema's ``Tool`` (name and
    ``mcp_server``) is the same on every step type, and the result came from that server.
    """
    step: dict[str, Any] = {"type": "observation", "content": text}
    if tool is not None:
        step["tool"] = {"name": tool}
        if mcp_server:
            step["tool"]["mcp_server"] = mcp_server
    step["output_summary"] = summary(text)
    return step
