"""The step rules every source shares: order, merging by call id, the error rule, bounds.

A source reader (OTel spans, LangChain runs, Agents spans, smolagents steps, Pydantic AI
messages) tells a :class:`StepBuilder` what happened, in any order: thoughts, tool calls the model
requested, tool executions and their results, the final answer. The builder turns that into the
``steps`` of a ``ReasoningTrace`` by the rules of ``spec/integrations.md``:

* order by start time; ties, and events with no time, keep the order they were told in (tree
  order), an event with no time sitting after the event told before it;
* a requested tool call and its execution are one ``tool_call`` step, matched by call id (the
  latest call of that id; a request, or a distinct execution, that reuses the id of a call
  already requested, or executed, is a new call), else by tool name in order, the names compared
  as a model API is given them (:func:`name_key`); a request that never ran is still a
  ``tool_call``;
* a failed tool call's result is an ``observation`` carrying the error text, and the next tool
  call after it is an ``error_recovery`` (it keeps its tool), but a call asked alongside the failed
  one, before it failed, answers nothing. The failure itself is never typed
  ``error_recovery``: that would reward failing;
* step content is cut at 8 KB, ``output_summary`` at 500 characters; ``input`` is a JSON object
  when one can be read, else ``{"_raw": "<text>"}``.
"""

from __future__ import annotations

import functools
import heapq
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from knowledgepulse.records.json_values import parsed_json

MAX_CONTENT_BYTES = 8192
"""Step content is cut to this many UTF-8 bytes (the corpora's bound)."""
MAX_OUTPUT_SUMMARY = 500
"""``output_summary`` is cut to this many characters."""
_CUT_MARK = "…"

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
        return head[: last.start() + 1]
    return head


def bounded(text: str, max_bytes: int = MAX_CONTENT_BYTES) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, between tokens, marked ``…``."""
    if len(text) * 4 <= max_bytes:  # no character takes more than 4 bytes: nothing to cut
        return text
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text
    room = max_bytes - len(_CUT_MARK.encode())
    return _cut(text, encoded[:room].decode("utf-8", "ignore")) + _CUT_MARK


def summary(text: str, max_chars: int = MAX_OUTPUT_SUMMARY) -> str:
    """``text`` cut to at most ``max_chars`` characters, between tokens, marked ``…`` when cut."""
    if len(text) <= max_chars:
        return text
    return _cut(text, text[: max_chars - 1]) + _CUT_MARK


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
    """A tool's arguments as a JSON object: a dict as it is, JSON text parsed, else ``_raw``."""
    if value is None:
        return None
    if isinstance(value, dict):
        return _jsonable(value)
    if isinstance(value, str):
        try:  # a NaN is no JSON; a lone surrogate reads as U+FFFD (parsed_json)
            parsed = parsed_json(value)
        except (ValueError, RecursionError):
            return {"_raw": value} if value else None
        return parsed if isinstance(parsed, dict) else {"_raw": value}
    return {"_raw": as_text(value)}


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
    requested: bool = False
    executed: bool = False
    text: str | None = None  # the step's text, when the source gave one (else name and input)
    asked_at: int | None = None  # when the request was told (the builder's count of tells)
    asked_time: float | None = None  # the request's own time, when the source gave one
    failed_at: int | None = None  # when its failure was told


@dataclass(slots=True)
class _Event:
    at: float | None
    seq: int
    text: str | None = None
    tool: _ToolEvent | None = None
    error: str | None = None
    terminal: bool = False


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
    _answer_at: float | None = None
    answer_is_step: bool = True
    """Whether the final answer is also the last ``thought`` step (a row kp wrote may say no)."""
    told_once: bool = False
    """Whether no thought repeats the answer (a row kp wrote): none is dropped as a repeat."""
    failed_calls: frozenset[str] | None = None
    """The call ids whose result was an error, where the source says (a row kp wrote); else a
    result's text says whether it failed."""
    call_texts: frozenset[str] = frozenset()
    """The call ids whose assistant turn's text is the call's own step text (a row kp wrote)."""
    user_errors: bool = False
    """Whether a user turn after the objective is an error met outside a tool, as a row kp wrote
    tells one (the environment speaking), not the user asking more."""
    _seen_text: bool = False
    # Indexes of the tool events, so that matching a call costs the same in a trace of 100,000.
    _by_call_id: dict[str, _Event] = field(default_factory=dict)
    _waiting: _Waiting = field(default_factory=dict)
    _unanswered_from: int = 0  # no event before this index is a tool call still unexecuted
    _told: int = 0  # how many requests and results were told: when each was, in told order

    def thought(self, text: str | None, *, at: Timestamp = None) -> None:
        """Model reasoning, a plan, or assistant text that is not the final answer."""
        if text and text.strip():
            self._seen_text = True
            self._events.append(_Event(_seconds(at), len(self._events), text=text))

    def answer(self, text: str | None, *, at: Timestamp = None) -> None:
        """The final answer: the last ``thought`` step and the outcome's ``result_summary``.

        A later call replaces an earlier one (the last answer is the final one).
        """
        if text and text.strip():
            self._seen_text = True
            self._answer, self._answer_at = text, _seconds(at)

    def error(self, text: str | None, *, at: Timestamp = None, terminal: bool = False) -> None:
        """An evident error that belongs to no tool call (a parse error, a rejected output).

        It is an ``observation`` carrying the text, and the next action is its
        ``error_recovery``. A ``terminal`` error (out of steps, say) ends the run: what follows
        it (a forced final answer) recovers nothing.
        """
        if text and text.strip():
            self._seen_text = True
            event = _Event(_seconds(at), len(self._events), error=text, terminal=terminal)
            self._events.append(event)

    @property
    def final_answer(self) -> str | None:
        """The final answer told so far, if any."""
        return self._answer

    @property
    def told_errors(self) -> bool:
        """Whether an error was told: an evident error, or a tool call's failed result."""
        return any(event.error or (event.tool and event.tool.error) for event in self._events)

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
    ) -> None:
        """A tool call the model asked for; merged with its execution when one is told.

        ``text``: the step's own text (what the agent said with the call), where the source
        keeps one; else the step's text is the call's name and arguments.
        """
        event = self._matching(name, call_id, flag="requested")
        if event is None:
            event = self._new_tool(name, call_id, at)
        tool = _tool(event)
        self._told += 1
        if tool.asked_at is None:
            tool.asked_at, tool.asked_time = self._told, _seconds(at)
        if call_id is not None and tool.call_id is None and call_id not in self._by_call_id:
            # An execution that named no call, joined by name: the call is known by the
            # request's id from now on (the tool result a later model call is given names it).
            tool.call_id = call_id
            self._by_call_id[call_id] = event
        tool.requested = True
        if tool.arguments is None:
            tool.arguments = arguments
        if text and text.strip():
            self._seen_text = True
            tool.text = text

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
    ) -> None:
        """A tool's execution and its result (``error``: the failure's text, when it failed).

        It joins the request with the same call id, else the first request of that name not yet
        executed; its own start time, when known, places the merged step. A ``distinct``
        execution (a tool span of its own) never joins a call already executed: two executions
        that share a call id are two calls.
        """
        if output is not None or error:
            self._seen_text = True
        event = self._matching(name, call_id, flag="executed", distinct=distinct)
        if event is None:
            event = self._new_tool(name, call_id, at)
        elif at is not None:
            event.at = _seconds(at)
        tool = _tool(event)
        tool.executed = True
        if name and name != tool.name:
            tool.name = name
            self._wait(event, "requested")  # a request may still join it, by its new name
        if arguments is not None:
            tool.arguments = arguments
        if output is not None:
            tool.output = output
        if error:
            tool.error = error
            self._told += 1
            if tool.failed_at is None:  # a result told again (a later model call's input)
                tool.failed_at = self._told
        if latency_ms is not None:
            tool.latency_ms = max(0.0, latency_ms)
        if mcp_server:
            tool.mcp_server = mcp_server

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
        # An event with a call id qualifies only when this call has none.
        heads = [self._first_waiting(flag, name, False)]
        if call_id is None:
            heads.append(self._first_waiting(flag, name, True))
        found = min((head for head in heads if head), key=lambda event: event.seq, default=None)
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

    def steps(self) -> list[dict[str, Any]]:
        """The ``steps`` array, numbered from 0, the final answer last.

        The action after an evident error is its ``error_recovery``: the next tool call, or,
        when no tool call follows, the next thought (the final answer included); a thought that
        another error follows is the recovery that failed. An error with nothing after it is
        terminal: no step is a recovery. A call requested before a failed call's result was told
        (the model asked for both at once) cannot answer that failure: it recovers nothing, and
        the failure still waits for its recovery.
        """
        steps: list[dict[str, Any]] = []
        after_error = False
        failed: _Event | None = None  # the failed call whose error is pending, if a call's
        reply: int | None = None  # the first thought after the pending error
        for event in self._without_repeated_answer(self._ordered()):
            if event.error is not None:
                if after_error and reply is not None:  # the reply tried, and failed again
                    steps[reply]["type"] = "error_recovery"
                steps.append(_error_observation(event.error))
                after_error, reply, failed = not event.terminal, None, None
            elif event.tool is None:
                reply = len(steps) if after_error and reply is None else reply
                steps.append({"type": "thought", "content": bounded(event.text or "")})
            else:
                tool = event.tool
                alongside = failed is not None and _asked_before(tool, failed)
                steps.append(_tool_step(tool, recovery=after_error and not alongside))
                if not alongside:
                    after_error, reply, failed = False, None, None
                if tool.error or tool.output is not None:
                    steps.append(_observation(tool))
                if tool.error:
                    after_error, reply, failed = True, None, event
        if self._answer is not None and self.answer_is_step:
            reply = len(steps) if after_error and reply is None else reply
            steps.append({"type": "thought", "content": bounded(self._answer)})
        if after_error and reply is not None:
            steps[reply]["type"] = "error_recovery"
        return [{"step_id": number, **step} for number, step in enumerate(steps)]

    def _without_repeated_answer(self, events: list[_Event]) -> list[_Event]:
        """The events less the thoughts after the last action that only repeat the answer.

        Frameworks record the final answer at each level that passes it up (the model call, the
        agent, the root run): it is one answer, told once, last.
        """
        if self._answer is None or not self.answer_is_step or self.told_once:
            return events
        answer = self._answer.strip()
        last_action = max(
            (n for n, event in enumerate(events) if event.tool is not None or event.error),
            default=-1,
        )
        return [
            event
            for n, event in enumerate(events)
            if n <= last_action or event.tool is not None or (event.text or "").strip() != answer
        ]

    def _ordered(self) -> list[_Event]:
        """Events by start time; an event with no time keeps its place after the one before."""
        keyed: list[tuple[float, int, _Event]] = []
        last = float("-inf")
        for event in self._events:
            if event.at is not None:
                last = event.at
            keyed.append((event.at if event.at is not None else last, event.seq, event))
        keyed.sort(key=lambda item: (item[0], item[1]))
        return [event for _, _, event in keyed]


def _joins(tool: _ToolEvent, flag: _Flag, *, distinct: bool) -> bool:
    """Whether a request or an execution with a call's id is that call (the latest of the id).

    Distinct calls may share an id (an agent that numbers its calls per turn): a second request
    is a new call, and so is a second ``distinct`` execution (a tool span of its own). A result
    told again (the tool message a model call is given) joins the call it answers.
    """
    if flag == "requested" or distinct:
        return not getattr(tool, flag)
    return True


def _asked_before(tool: _ToolEvent, failed: _Event) -> bool:
    """Whether a call was asked before another call failed: with it, so no answer to it.

    Parallel calls of one model turn are asked together. By time where both have one (the
    request's time, the failed call's start); by the order they were told where neither has;
    never when only one has (the two cannot be compared).
    """
    if tool.asked_time is not None and failed.at is not None:
        return tool.asked_time < failed.at
    if tool.asked_time is not None or failed.at is not None:
        return False
    told = _tool(failed).failed_at
    return tool.asked_at is not None and told is not None and tool.asked_at < told


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
    step["content"] = bounded(tool.text or f"{tool.name} {compact}".rstrip())
    step["tool"] = {"name": tool.name}
    if tool.mcp_server:
        step["tool"]["mcp_server"] = tool.mcp_server
    if arguments is not None:
        step["input"] = arguments
    if tool.error or tool.output is not None:
        step["output_summary"] = summary(tool.error or as_text(tool.output))
    if tool.latency_ms is not None:
        step["latency_ms"] = float(tool.latency_ms)
    return step


def _error_observation(text: str) -> dict[str, Any]:
    return {"type": "observation", "content": bounded(text), "output_summary": summary(text)}


def _observation(tool: _ToolEvent) -> dict[str, Any]:
    text = as_text(tool.output) if tool.output is not None else ""
    if tool.error:
        text = tool.error if not text or tool.error in text else f"{tool.error}\n{text}"
    step: dict[str, Any] = {"type": "observation", "content": bounded(text)}
    step["tool"] = {"name": tool.name}
    step["output_summary"] = summary(text)
    return step
