"""Text inside messages: content parts, tool results that say they failed, calls in tags.

Chat formats have no error flag on a tool result (Anthropic's ``is_error`` aside), so a result is
an evident error when it says so first: an object with an ``error`` key, or text that starts with
``Error``, ``Exception`` or a Python traceback (as tool runners write them), or with the OpenAI
Agents SDK's own message for a tool that raised ("An error occurred while running the tool. Please
try again. Error: ...", its ``default_tool_error_function``).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from knowledgepulse.records.json_values import json_text, json_value, python_literal
from knowledgepulse.sources._envelope import NEW_PROBLEM, NEW_QUESTION
from knowledgepulse.sources._hosted import mcp_error_text
from knowledgepulse.sources._rows import DEFAULT_SUCCESS_THRESHOLD
from knowledgepulse.sources._steps import as_text

_ERROR_START = re.compile(
    # OpenHands' function-calling converter labels each tool message "OBSERVATION:" first
    # (SWE-Gym's rows), its converter for models without function calling "EXECUTION RESULT
    # of [execute_bash]:" (ADP's SFT rows): the result it labels may still say it failed.
    r"^\s*(?:observation:\s*|execution result of \[[^\]\n]*\]:\s*)?"
    r"(?:error\b|exception\b|traceback \(most recent call last\)|\w*error:"
    r"|an error occurred while running the tool\b"
    # IPython's (and so Jupyter's) traceback: a rule of dashes, then the exception's name
    # beside "Traceback (most recent call last)" (``NameError   Traceback ...``).
    r"|-{10,}[ \t]*\r?\n[ \t]*[\w.]+[ \t]+traceback \(most recent call last\))",
    re.IGNORECASE,
)
_KG_WORDS = "cannot be executed. You may make a mistake"
_NOT_EXECUTED = re.compile(
    r"\bcannot be executed\. You may make a mistake and need to fix it\.\s*\Z"
)
"""AgentBench's knowledge-graph environment answering a call it cannot run
(``get_relations(X) cannot be executed. You may make a mistake and need to fix it.``), in
AgentInstruct's rows and ADP's standardized ones: the call failed."""
_EXIT_CODE = re.compile(r"\n[ \t]*Exit code:[ \t]*(-?\d+)\s*\Z")
"""A shell tool's result that ends by saying how its command exited (nanobot's ``exec`` tool
appends ``Exit code: N`` to the command's output): a code other than 0 is a failed command."""
_EXIT_HEAD = re.compile(r"Exit code (-?\d+)(?:\n|\Z)")
"""A shell tool's result that begins by saying how its command exited: Claude Code's ``Bash``
writes ``Exit code 1`` on the first line, then what the command printed, where its session marks
the result ``is_error`` (a rollout made from the session, as NeMo Gym's, keeps only the text)."""
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_TOOL_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*(?:</tool_response>|$)", re.DOTALL)
_FENCED_RESPONSE = re.compile(r"```tool_response[ \t]*\n(.*?)\n?```", re.DOTALL)
"""Hermes' ``<tool_response>`` written as a fenced block (MarketDataGenie's ShareGPT rows, the
fenced protocol of ``@ai-sdk-tool/parser``'s Gemma middleware): read as the tag is, where the
turn is such blocks alone (a turn that quotes one among other words is no result)."""
_LISTED_CALLS = re.compile(r"<TOOLCALL>\s*(.*?)\s*(?:</TOOLCALL>|$)", re.DOTALL)
_LISTED_RESPONSES = re.compile(r"<TOOL_RESPONSE>\s*(.*?)\s*(?:</TOOL_RESPONSE>|$)", re.DOTALL)
"""NVIDIA Nemotron's tags (its chat templates; Llama-Nemotron's post-training rows, When2Call's):
the model writes ``<TOOLCALL>[{"name": ..., "arguments": ...}, ...]</TOOLCALL>``, a JSON list of
its calls, and the results come back as ``<TOOL_RESPONSE>[...]</TOOL_RESPONSE>``, one a call, in
order."""
_THINK = re.compile(
    r"<(think|scratch_pad)>(.*?)</\1>|<\|think_start\|>(.*?)<\|think_end\|>", re.DOTALL
)
"""Reasoning written in the reply: ``<think>`` blocks, and the ``<scratch_pad>`` in which
Hermes' function-calling prompt (NousResearch's model cards, its datasets' generators) has the
model plan its calls (Goal, Actions, Observation, Reflection) before the reply or the calls;
FutureHouse's ether0 writes its reasoning between ``<|think_start|>`` and ``<|think_end|>``
(then its answer between ``<|answer_start|>`` and ``<|answer_end|>``, kept as it is)."""
_THINK_OPENERS = ("<think>", "<scratch_pad>", "<|think_start|>")
_LEFTOVER_CLOSE = re.compile(r"\s*(?:</think>\s*)+")
"""``</think>`` tags with nothing but blanks before them, at a reply's start."""
_XML_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|$)", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)
_REACT_CALL = re.compile(
    r"^Action:[ \t]*(?P<name>[^\n]*?)[ \t]*\nAction Input:[ \t]*(?P<input>.*?)"
    r"(?:\nObservation:.*)?\Z",
    re.MULTILINE | re.DOTALL,
)
_REACT_ANSWER = re.compile(r"^(?:Final )?Answer:[ \t]*", re.MULTILINE)
_REACT_OBSERVATION = "Observation:"
_CALL_NAME = re.compile(r"(^\[|\),\s*)([A-Za-z_][\w .\-]*?)\(")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
"""What Claude Code adds to a user's turn for the model (a file changed, a todo list is empty)."""
_NOTICE = re.compile(r"<SYSTEM_NOTICE>.*?</SYSTEM_NOTICE>", re.DOTALL)
"""What Cline's SDK adds to each user turn a context compaction keeps (its ``basic-compaction``:
"Earlier context was compacted. Summary of your actions after the request above: ..."), as a
text block of its own: the agent's record of what it did, for the model."""
_EXAMPLE_BANNER = "--------------------- END OF EXAMPLE ---------------------"
_NEW_TASK = re.compile(
    r"-{21} NEW TASK DESCRIPTION -{21}\n(.*?)\n-{21} END OF NEW TASK DESCRIPTION -{21}",
    re.DOTALL,
)
"""OpenHands' wrapping of the task for a model without native tool calls (its
``IN_CONTEXT_LEARNING_EXAMPLE_PREFIX`` and ``..._SUFFIX``): a worked example of another task, then
the task between these banners, then "PLEASE follow the format strictly!"."""
COMMAND_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
"""A mini-SWE-agent command: a fenced block, as its default action regex finds it."""
RETURN_CODE = re.compile(
    r"\s*(?:<exception>.*?</exception>\s*)?<returncode>(-?\d+)</returncode>", re.DOTALL
)
"""How mini-SWE-agent's output of a command opens: the exception that stopped the command, if
one did, then its return code."""
_MAX_LITERAL = 100_000  # Python literals past this are not parsed (ast is recursive and slow)


def one_of(value: Any, names: frozenset[str]) -> bool:
    """Whether a parsed JSON value is one of ``names`` (a list or an object never is)."""
    return isinstance(value, str) and value in names


def last_assistant(messages: list[Any]) -> int:
    """The index of the last assistant message (``role: assistant``), ``-1`` when none is."""
    return next(
        (
            n
            for n in range(len(messages) - 1, -1, -1)
            if isinstance(m := messages[n], dict) and m.get("role") == "assistant"
        ),
        -1,
    )


_TOOL_DOCS = re.compile(
    r"\A(?:The following pre-defined functions are (?:also )?available in .*?\. "
    r"|The environment .*? provides the following pre-defined functions: "
    r"|In .*?, you can (?:also )?use the following pre-defined functions: "
    r"|Available functions in .*?: "
    r"|The following functions are (?:also )?defined and ready for use in .*?: "
    r"|Note that .*? supports the following pre-defined functions: "
    r"|Below is a list of functions you can (?:also )?use in the .*? environment\. "
    r"|The toolkit for .*? contains the following functions\. )\n\n"
    r"(?:[A-Za-z_][\w.]*\(.*\n(?: {4}.*\n)*\n)*"
)
"""The tools' documentation the Agent Data Protocol's SFT converter (``std_to_sft``) puts before
a trajectory's first user turn: one of its eight opening sentences, then each function's
signature and its docstring, every line of which it indents by four spaces, and a blank line."""


def tool_docs(text: str | None) -> str | None:
    """The tools' documentation a user's turn begins with (:data:`_TOOL_DOCS`), or ``None``."""
    if text is None or not ("pre-defined functions" in text or "following functions" in text):
        return None
    found = _TOOL_DOCS.match(text)
    return found[0] if found else None


def users_words(text: str | None) -> str | None:
    """A user's turn less what a coding agent adds; ``None`` if nothing is left.

    Claude Code's system reminders are no words of the user's; nor is OpenHands' worked example
    of another task, which it puts before the task of the first user turn for a model without
    native tool calls (SWE-Gym's, SWE-smith's, nebius' rows keep it): the task is what the
    banners enclose. Nor is Cline's ``<SYSTEM_NOTICE>`` of what the agent did after a request a
    context compaction kept (the Cline SDK's sessions), nor the tools' documentation ADP's SFT
    rows begin with (:data:`_TOOL_DOCS`).
    """
    if text is None:
        return text
    if (docs := tool_docs(text)) is not None:
        text = text[len(docs) :].strip() or None
        if text is None:
            return text
    if "<system-reminder>" in text:
        text = _REMINDER.sub("", text).strip() or None
    if text is not None and "<SYSTEM_NOTICE>" in text:
        text = _NOTICE.sub("", text).strip() or None
    if text is not None and _EXAMPLE_BANNER in text:
        task = _NEW_TASK.search(text)
        text = task.group(1).strip() or None if task else text
    return text


_COMPACTION_SUMMARY = "compaction_summary"
"""The ``metadata.kind`` of the user message in which the Cline SDK's agentic context compaction
(its default since July 2026) puts its summary of the turns it replaced ("Context summary:\\n\\n##
Goal ..."): the model's own record, told to the model, no words of the user's."""


def compaction_summary(message: Any) -> bool:
    """Whether a message is the Cline SDK's summary of the turns a compaction replaced."""
    metadata = message.get("metadata") if isinstance(message, dict) else None
    return isinstance(metadata, dict) and metadata.get("kind") == _COMPACTION_SUMMARY


def content_text(content: Any, kinds: frozenset[str] = frozenset({"text"})) -> str | None:
    """A message's text: a string, or the text of its parts of the given types.

    A part keeps its text in ``text``, in ``value`` (LLaMA-Factory's), or in ``content`` (Oumi's).
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                # A bare string part is text (harmony's messages keep their content so): not
                # one of the other kinds asked for (reasoning), or the text is read twice.
                if one_of("text", kinds):
                    texts.append(part)
            elif isinstance(part, dict) and one_of(part.get("type", "text"), kinds):
                text = part.get("text")
                if not isinstance(text, str):
                    text = part.get("value")  # LLaMA-Factory's parts
                if not isinstance(text, str) and "type" in part:
                    # Oumi's parts keep their text in `content` (`{"type": "text", "content":
                    # ...}`); an untyped part's `content` is no text of its own.
                    text = part.get("content")
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts) or None
    return None


def error_text(output: Any) -> str | None:
    """The text of a tool result that says it failed, else ``None``."""
    if isinstance(output, dict):
        return _object_error(output)
    if not isinstance(output, str):
        return None
    if _ERROR_START.match(output) or (_KG_WORDS in output and _NOT_EXECUTED.search(output)):
        return output
    # Each regex and parse only where its words are: most results say none of them.
    exited = _EXIT_CODE.search(output) if "Exit code:" in output else None
    if exited is not None and int(exited.group(1)) != 0:
        return output
    headed = _EXIT_HEAD.match(output)
    if headed is not None and int(headed.group(1)) != 0:
        return output
    # An "error" key is written as the word, or with a \u escape in it.
    keyed = "error" in output or "\\u" in output or "exit_code" in output
    if keyed and output.lstrip().startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            return None
        if isinstance(parsed, dict) and _object_error(parsed) is not None:
            return output
    return None


_FAILED_STATUSES = frozenset({"error", "failed", "failure"})
"""What a tool's own ``status`` says when it failed (casefolded)."""
_FAILURE_MESSAGES = ("message", "error_message", "error", "detail")
"""Where a result that says it failed says why, in order."""


def reported_failure(output: Any) -> str | None:
    """Why a tool's result (parsed from its JSON) says the tool failed; ``None`` when it does not.

    The one test of a tool observation whose status says nothing (Langfuse's ``DEFAULT`` level,
    an OTel tool span that ended OK): an object whose ``status`` (or ``..._status``) is
    ``error`` or ``failed`` (a C# agent's ``{"response_status": "Error", "message": ...}``,
    Google ADK's ``{"status": "error", "error_message": ...}``), its ``message`` (else
    ``error_message``, ``error``, ``detail``) the text; else what :func:`error_text` finds.
    """
    if isinstance(output, Mapping):
        statuses = [v for k, v in output.items() if k == "status" or str(k).endswith("_status")]
        if any(isinstance(v, str) and v.casefold() in _FAILED_STATUSES for v in statuses):
            why = next((output[key] for key in _FAILURE_MESSAGES if output.get(key)), None)
            return why if isinstance(why, str) else as_text(output)
    return error_text(output)


def _object_error(value: Mapping[str, Any]) -> str | None:
    error = value.get("error")
    if error in (None, False, "", {}, []):
        return json_text(value) if _exited_badly(value) else None
    return error if isinstance(error, str) else json_text(value)


_NO_ERROR = "not an error"
"""How Hermes' ``exit_code_meaning`` says a command's non-zero exit code is informational
(``tools/terminal_tool.py``: ``No matches found (not an error)``)."""


def _exited_badly(result: Mapping[str, Any]) -> bool:
    """Whether a command's result object says it exited other than 0 (``exit_code``).

    Hermes' ``terminal`` tool answers ``{"output", "exit_code", "error": null}``, its
    ``exit_code_meaning`` saying where a code is no error (``grep``'s 1: ``No matches found (not
    an error)``; ``diff``'s 1).
    """
    code, meaning = result.get("exit_code"), result.get("exit_code_meaning")
    failed = isinstance(code, int) and not isinstance(code, bool) and code != 0
    return failed and not (isinstance(meaning, str) and _NO_ERROR in meaning)


@dataclass(frozen=True, slots=True)
class TaggedCall:
    """A ``<tool_call>`` in assistant text: a name and its arguments."""

    name: str
    arguments: Any


def has_tags(text: Any) -> bool:
    """Whether text holds Hermes ``<tool_call>`` or ``<tool_response>`` tags."""
    return isinstance(text, str) and ("<tool_call>" in text or "<tool_response>" in text)


def has_listed_calls(text: Any) -> bool:
    """Whether text holds Nemotron's ``<TOOLCALL>`` list of calls."""
    return isinstance(text, str) and "<TOOLCALL>" in text


def has_result_tags(text: Any) -> bool:
    """Whether a turn holds tool results in tags: Hermes' (or its fenced blocks), Nemotron's."""
    return (
        has_tags(text)
        or (isinstance(text, str) and "<TOOL_RESPONSE>" in text)
        or bool(_fenced_responses(text))
    )


def _fenced_responses(text: Any) -> list[str]:
    """The bodies of a turn's fenced ``tool_response`` blocks, where the turn is them alone."""
    if not isinstance(text, str) or "```tool_response" not in text:
        return []
    if _FENCED_RESPONSE.sub("", text).strip():
        return []
    return _FENCED_RESPONSE.findall(text)


def split_think(text: str, *, unopened: bool = False) -> tuple[list[str], str]:
    """``<think>`` (and ``<scratch_pad>``) blocks, reasoning, and the text left outside them.

    ``unopened``: the reply may close a block it never opened (``...</think>answer``), having
    begun inside it: Qwen3's and DeepSeek-R1's chat templates open ``<think>`` in the prompt,
    so the model's reply holds only its end (nanobot's sessions keep such replies). What comes
    before that ``</think>`` is reasoning, when an answer follows it; when nothing follows, it is
    the text, its tag dropped (a model served with no reasoning parser: each turn before a call
    is reasoning closed so, and what the text is, the caller decides). (Not asked of a message
    that keeps its reasoning apart: its text is the reply, a stray tag in it no boundary.)
    """
    opened: list[str] = []
    # A reasoning parser's leftover: the reasoning taken out, its closing tags left before the
    # reply (vLLM serving Qwen3: "\n\n</think>\n\n</think>\n\n<solution>A</solution>"). No text.
    if (leftover := _LEFTOVER_CLOSE.match(text)) is not None and text[leftover.end() :].strip():
        text = text[leftover.end() :]
    closing = text.find("</think>") if unopened else -1
    if closing >= 0 and not 0 <= text.find("<think>") < closing:
        before, after = text[:closing].strip(), text[closing + len("</think>") :]
        if after.strip():
            text, opened = after.lstrip("\r\n"), [before] if before else []
        elif before:  # nothing after the tag (NeMo Gym's ns_tools rollouts): no tag kept
            text = before
    if not any(map(text.__contains__, _THINK_OPENERS)):  # most text: regex passes spared
        return opened, text
    thoughts = [
        thought
        for found in _THINK.finditer(text)
        if (thought := (found[2] or found[3] or "").strip())
    ]
    text = _THINK.sub("", text)
    # A reply whose reasoning an agent wrote as a block of its own before the model's text
    # (hermes-agent's trajectories: ``<think>\n{reasoning}\n</think>\n{content}``, the block
    # empty when the server parsed none out), that text having begun inside the template's block
    # (Qwen served without a reasoning parser): its ``</think>`` is left after the blocks, and
    # what comes before it is reasoning as well.
    closing = text.find("</think>") if unopened else -1
    if closing >= 0 and text[closing + len("</think>") :].strip():
        before, text = text[:closing].strip(), text[closing + len("</think>") :]
        thoughts += [before] if before else []
    # The line break after a block is the writer's separator (``</think>\n{content}``), not
    # the reply's first character.
    return opened + thoughts, text.lstrip("\r\n")


_ACKNOWLEDGED = re.compile(
    r"^\s*(?:ok(?:ay)?|understood|got it|i understand|i(?:'ve| have) understood)\b",
    re.IGNORECASE,
)
_MAX_ACKNOWLEDGEMENT = 80
"""An acknowledgement is a short reply ("Ok.", "I've understood your instruction, start
please."); a longer one is the model's own work."""
_MIN_INSTRUCTIONS = 200
"""Priming instructions explain an environment (AgentInstruct's run to thousands of characters,
its WebShop's to 248); a short first message acknowledged with "OK" is a person's request."""


_MAX_EXAMPLE_TURNS = 40
"""How far a worked problem before the task is looked for (AgentBench's takes 5 turns)."""


def primed(turns: Iterable[tuple[str, str | None]]) -> range | None:
    """The opening turns that prime the model, when the first user turn is its instructions.

    AgentInstruct (AgentTuning), ETO and the datasets built like them open with the task's
    instructions as a user turn, the assistant's scripted "Ok.", then the task as the next user
    turn: the instructions are the system prompt, the task the objective. AgentBench's OS tasks
    give the instructions with a problem, then one worked run of it, then the task in a turn
    of its own (:data:`NEW_PROBLEM`): the worked run is no part of the run either; so do its
    knowledge-graph tasks, after the "Ok.", their worked question answered ``Final Answer: #3``,
    then the task (:data:`NEW_QUESTION`). ``turns`` are
    each turn's kind (``system``, ``user``, ``assistant``; anything else, such as an assistant
    turn that calls a tool, is ``other``) and text, read only as far as the opening needs (a
    generator saves reading every turn's text). The range's first turn holds the instructions
    (the worked problem's, where a conversion moved them to the system prompt).
    """
    rest = iter(turns)
    turn, first = next(rest, None), 0
    while turn is not None and turn[0] == "system":
        turn, first = next(rest, None), first + 1
    if turn is None or turn[0] != "user":
        return None
    opening = list(itertools.islice(rest, 2))
    instructed = None
    if [kind for kind, _ in opening] == ["assistant", "user"]:
        reply, task = (text or "" for _, text in opening)
        acknowledged = len(reply) <= _MAX_ACKNOWLEDGEMENT and _ACKNOWLEDGED.match(reply)
        if acknowledged and task.strip() and len(turn[1] or "") >= _MIN_INSTRUCTIONS:
            instructed = range(first, first + 2)
    # Converted (ADP's), the worked problem keeps its turns and the instructions go elsewhere.
    later = itertools.chain(opening, itertools.islice(rest, _MAX_EXAMPLE_TURNS))
    said = ""  # the assistant's last text: a worked question ends in its answer
    for number, (kind, text) in enumerate(later, first + 1):
        if kind == "user" and _opens_task(text or "", said):
            return range(first, number)
        said = (text or "") if kind == "assistant" else said
    return instructed


_WORKED_PROBLEM = re.compile(r"\s*^Now, my problem is:\s.*\Z", re.MULTILINE | re.DOTALL)
"""How AgentBench's OS instructions end: the problem of the worked run that follows them."""


def instructions(text: str | None) -> str | None:
    """The instructions a priming turn (:func:`primed`'s first) gives, as the system prompt.

    AgentBench's OS tasks end theirs with the worked run's problem ("Now, my problem is:
    ..."): that run is no part of the run, so its problem is no instruction either (left in, a
    training row's system prompt asked it and its user turn asked the task).
    """
    if text is None or "Now, my problem is:" not in text:  # the pattern scans from every space
        return text
    kept = _WORKED_PROBLEM.sub("", text)
    return kept if kept.strip() else text


_WORKED_ANSWER = re.compile(r"^Final Answer:|<solution>", re.MULTILINE)
"""How the worked question's last turn answers it: AgentBench's ``Final Answer: #3``, which
ADP's standardized rows write as ``<solution> #3 </solution>``."""


def _opens_task(text: str, said: str) -> bool:
    """Whether a user turn gives AgentBench's task after its worked problem (or question)."""
    if text.startswith(NEW_PROBLEM):
        return True
    return text.startswith(NEW_QUESTION) and _WORKED_ANSWER.search(said) is not None


def json_or_value(value: Any) -> Any:
    """A value kept as a JSON string (a Parquet string column) parsed; else as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def api_error_text(message: str) -> str:
    """An error's message as a person reads it: the API's own words where it is a JSON body.

    An agent may pass the model API's failed response on as its error's message (OpenCode's
    ``{"message": "Tool call validation failed: ...", "type": "invalid_request_error"}``,
    OpenAI's ``{"error": {"message": ..., "type": ...}}``): the body's ``error`` object's
    ``message``, else the body's own, read as :func:`mcp_error_text` reads an error; any other
    text as it is.
    """
    body = json_or_value(message)
    if not isinstance(body, Mapping):
        return message
    error = body.get("error")
    said = mcp_error_text(error if isinstance(error, Mapping) else body)
    return said if isinstance(said, str) and said.strip() else message


_ACTION_CALL = re.compile(r"<action>\s*(\{.*?\})\s*</action>", re.DOTALL)
"""A call as a JSON object between ``<action>`` tags, ``{"name": ..., "arguments": {...}}``
(AReaL's geo_edit agent writes its tool calls so, its reasoning before them)."""


def has_action_calls(text: Any) -> bool:
    """Whether text holds a call between ``<action>`` tags (see :func:`action_calls`)."""
    return isinstance(text, str) and bool(action_calls(text)[0])


def action_calls(text: str) -> tuple[list[TaggedCall], str]:
    """The ``<action>{"name": ..., "arguments": ...}</action>`` calls of assistant text.

    Returned with the text outside them; an ``<action>`` block that is no such object stays.
    """
    calls: list[TaggedCall] = []

    def take(found: re.Match[str]) -> str:
        call = _tagged_call(json_or_python(found.group(1)))
        if call is None:
            return found.group(0)
        calls.append(call)
        return ""

    rest = _ACTION_CALL.sub(take, text) if "<action>" in text else text
    return calls, rest.strip()


def has_xml_calls(text: Any) -> bool:
    """Whether text holds ``<function=NAME>`` calls (see :func:`xml_calls`)."""
    return isinstance(text, str) and "<function=" in text


def xml_calls(text: str) -> tuple[list[TaggedCall], str]:
    """The ``<function=NAME>`` calls of assistant text, and the text outside them.

    Each is ``<function=NAME><parameter=KEY>VALUE</parameter>...</function>``: SWE-agent's and
    OpenHands' function calling for models without native tools writes them
    (SWE-smith's and SWE-Gym's trajectories), as Qwen3-Coder does inside ``<tool_call>``.
    """
    calls = [
        TaggedCall(
            name,
            {
                key: value.removeprefix("\n").removesuffix("\n")
                for key, value in _XML_PARAMETER.findall(body)
            },
        )
        for name, body in _XML_FUNCTION.findall(text)
    ]
    return calls, _XML_FUNCTION.sub("", text).strip()


def react_call(text: Any) -> tuple[TaggedCall, str] | None:
    """The ReAct call that ends assistant text, and the text before it; else ``None``.

    A ReAct agent that prompts for text, not native tool calls (LlamaIndex's ``ReActAgent``,
    LangChain's ReAct prompt), has the model write ``Thought: ...``, then ``Action: NAME`` and
    ``Action Input: ARGS`` (JSON, or a Python dict as LlamaIndex's examples show it), and sends
    the tool's result back as ``Observation: ...``.
    """
    if not isinstance(text, str) or "\nAction Input:" not in text:
        return None
    found = _REACT_CALL.search(text)
    if found is None or not found["name"]:
        return None
    body = found["input"].strip()
    arguments = json_or_python(body) if body else {}
    arguments = arguments if isinstance(arguments, dict) else {"_raw": body}
    return TaggedCall(found["name"], arguments), text[: found.start()].strip()


_DECLARED_ACTION = re.compile(r"(?:^|[\s\"'])(Action|ACTION|Act):", re.MULTILINE)
"""How instructions declare a text action protocol: the line the model is to write its action on
(AgentBench's tasks, as AgentInstruct's rows hold them: ALFWorld's ``ACTION: your next action``,
the OS task's ``Act: bash``, the DB task's ``Action: Operation``; WebShop's ``Action:``)."""
_ACTION_NAME = re.compile(r"[A-Za-z_][\w-]*")
_ACTION_ARGUMENT = re.compile(r"\A\s*[(\[](.*)[)\]]\s*\Z", re.DOTALL)
_ACTION_CODE = re.compile(r"```[\w-]*\n(.*?)\n?```", re.DOTALL)
_FINAL_ANSWER = re.compile(r"^\s*Final Answer:[ \t]*(.+)", re.MULTILINE | re.DOTALL)
_ENDING_ACTIONS = frozenset({"answer", "finish"})
"""The actions that end the run instead of calling a tool (``Act: answer(3)``, ``Act: finish``,
``Action: Answer`` then ``Final Answer: ...``; ReAct's ``Finish[...]``)."""


def declared_action(instructions: str | None) -> str | None:
    """The marker of the action line the instructions tell the model to write, else ``None``."""
    if not instructions or ("Act" not in instructions and "ACT" not in instructions):
        return None  # most prompts: no marker, found without the regex trying every position
    found = _DECLARED_ACTION.search(instructions)
    return found[1] if found else None


OBSERVED_ACTION = "Action"
"""The action line of a conversation whose user turns answer with ``Observation: ...``: ReAct's
convention (the environment's reply to the action), whatever the instructions said
(AgentBench's knowledge-graph task describes its tools, and the agent writes ``Action:
get_relations(...)``)."""


def observes(text: str | None) -> bool:
    """Whether a user turn is ReAct's ``Observation: ...``: the environment answering an action."""
    return isinstance(text, str) and text.lstrip().startswith(_REACT_OBSERVATION)


@dataclass(frozen=True, slots=True)
class WrittenAction:
    """The action an assistant turn wrote on its declared line: a call, or the run's end."""

    thought: str
    """The turn's text before the action line."""
    call: TaggedCall | None
    """The tool called: the action's first word, its text (and code block) the input; ``None``
    for an action that ends the run."""
    answer: str | None = None
    """What an ending action gives as the answer (``answer(3)``: ``3``), if anything."""


def written_action(text: Any, marker: str | None) -> WrittenAction | None:
    """The action an assistant turn wrote on the line ``marker`` declares (its last), else ``None``.

    An AgentBench agent writes its reasoning, then ``ACTION: go to cabinet 1`` (or ``Act: bash``
    and a fenced block of code; WebShop's ``Action:`` and the action on the next line), and the
    environment answers as the user: the action's first word names the tool.
    """
    if marker is None or not isinstance(text, str) or f"{marker}:" not in text:
        return None
    lines = text.splitlines()
    at = next(
        (n for n in range(len(lines) - 1, -1, -1) if lines[n].lstrip().startswith(f"{marker}:")),
        None,
    )
    # A turn that writes the observation after its action (a scratch pad's Goal / Action /
    # Observation / Reflection, written once the call ran, then the reply) records an action
    # taken, no call of its own: the environment's reply would have been the next turn.
    if at is None or any(line.lstrip().startswith("Observation:") for line in lines[at + 1 :]):
        return None
    action, after = lines[at].lstrip()[len(marker) + 1 :].strip(), at + 1
    while not action and after < len(lines):  # the action on the lines after the marker
        action, after = lines[after].strip(), after + 1
    name = _ACTION_NAME.match(action)
    if name is None:
        return None
    thought, rest = "\n".join(lines[:at]).strip(), "\n".join(lines[after:])
    if name[0].casefold() in _ENDING_ACTIONS:
        argument = _ACTION_ARGUMENT.match(action[name.end() :])
        final = _FINAL_ANSWER.search(rest)
        said = argument[1] if argument else final[1] if final else None
        return WrittenAction(thought, None, said.strip() if said and said.strip() else None)
    code = _ACTION_CODE.search(rest)
    arguments = {"action": action, **({"code": code[1]} if code else {})}
    return WrittenAction(thought, TaggedCall(name[0], arguments))


def acted(text: Any, marker: str | None) -> bool:
    """Whether an assistant turn called a tool on its declared action line."""
    written = written_action(text, marker)
    return written is not None and written.call is not None


def ended(text: Any, marker: str | None) -> bool:
    """Whether an assistant turn ended the run on its declared action line (``finish[X]``)."""
    written = written_action(text, marker)
    return written is not None and written.call is None


def invented_observations(turns: Iterable[tuple[bool, str | None]], marker: str | None) -> set[int]:
    """The agent's turns that write an ``Observation: ...`` after the run's end (``finish[X]``).

    ``turns``: whether each turn is the agent's text alone (no native call), and its text. In
    ReAct the environment answers each action with an observation, and ``finish[X]`` ends the
    episode: the environment's ``Observation: Episode finished, reward = R`` is the last word.
    An agent's turn between the two that is itself an ``Observation:`` line (FireAct's rows keep
    five: GPT-4 writing ``Observation: Episode finished, reward = 1`` before the environment's
    ``reward = 0``) is no action and no answer, and closes nothing: the agent's own text,
    invented, as a model's completion that writes observations is (:func:`react_transcript`).
    """
    found: set[int] = set()
    ended_run = False  # the agent's turn before ended the run on its action line
    for index, (agents, text) in enumerate(turns):
        if agents and ended_run and observes(text):
            found.add(index)  # the run stays ended: the environment's reply still closes it
        else:
            ended_run = agents and ended(text, marker)
    return found


_EPISODE_END = re.compile(
    r"\A\s*Episode finished, reward = (?P<reward>True|False|-?\d+(?:\.\d*)?)\.?\s*\Z"
)


def episode_verdict(text: str | None) -> bool | None:
    """The environment's verdict on the run its closing action ended, else ``None``.

    ReAct's Wikipedia environment (HotpotQA, FEVER; FireAct's fine-tuning rows keep it) answers
    the agent's ``finish[X]`` with ``Observation: Episode finished, reward = R``: whether the
    answer was right (``True`` / ``False``, or a number, 1 right, 0 wrong).
    """
    # Its last line says it: an agent that wrote an episode's end itself (FireAct's rows keep a
    # few) had it followed by the environment's own.
    lines = [react_observation(line) for line in (text or "").strip().splitlines()]
    found = _EPISODE_END.match(lines[-1]) if lines else None
    if found is None:
        return None
    reward = found["reward"]
    if reward in ("True", "False"):
        return reward == "True"
    return float(reward) >= DEFAULT_SUCCESS_THRESHOLD  # as a row's reward column counts


_TRANSCRIPT_LINE = re.compile(r"(Thought|Action|Observation):")
"""A line of a ReAct run written out whole: the model's thought or action, the environment's
observation."""


def react_transcript(text: str) -> list[tuple[str, str]] | None:
    """The turns of a ReAct run written out whole in one reply text, else ``None``.

    FireAct's fine-tuning rows in alpaca's form keep a whole run as the ``output`` the model is
    trained to write: ``Thought: ...`` and ``Action: search[...]`` lines, the environment's
    ``Observation: ...`` after each action, to the closing ``Action: finish[X]`` and its
    ``Observation: Episode finished, reward = R``. The agent's turns and the environment's, as
    the chat rows of the same runs keep them (each observation a user turn), split where an
    observation starts and where the agent writes again; a text where an observation follows an
    action is one (an observation after a thought alone, FireAct keeps a few, is then read as
    in the chat rows: the user answering the agent). Lines before its first thought stay in the
    agent's first turn (FireAct's converter left there the lines of the question after its
    first, a choice's options).
    """
    if "\nObservation:" not in text:
        return None
    turns: list[tuple[str, str]] = []
    role, lines = "assistant", list[str]()
    for line in text.strip().splitlines():
        kind = _TRANSCRIPT_LINE.match(line)
        starts = None if kind is None else "user" if kind[1] == "Observation" else "assistant"
        if starts is not None and starts != role:
            turns.append((role, "\n".join(lines).strip()))
            role, lines = starts, []
        lines.append(line)
    turns.append((role, "\n".join(lines).strip()))
    acted = any(
        any(line.startswith("Action:") for line in said.splitlines())
        for (who, said), (then, _) in itertools.pairwise(turns)
        if who == "assistant" and then == "user"
    )
    return turns if acted else None


_HUMAN_ASSISTANT = re.compile(r"(?:\A|\n\n)(Human|Assistant):[ \t]?")
"""A turn's label in Anthropic's Human / Assistant form, after the blank line before it."""


def human_assistant_turns(text: str) -> list[tuple[str, str]] | None:
    r"""The turns of a conversation written in Anthropic's Human / Assistant form, else ``None``.

    Anthropic's HH-RLHF rows keep each conversation as one text, as its early models' prompts
    were written: ``"\n\nHuman: ...\n\nAssistant: ..."``, each turn after a blank line and
    its speaker's label. A text that opens otherwise is none; an empty last ``Assistant:``
    (a prompt left open for the reply) is no turn.
    """
    opened = text.lstrip()
    if not opened.startswith("Human:") or "\n\nAssistant:" not in opened:
        return None
    pieces = _HUMAN_ASSISTANT.split(opened)
    labels, said = pieces[1::2], pieces[2::2]
    turns = [
        ("user" if label == "Human" else "assistant", text.strip())
        for label, text in zip(labels, said, strict=True)
    ]
    if turns and turns[-1] == ("assistant", ""):
        turns.pop()
    return turns


def react_observation(text: str) -> str:
    """A ReAct tool result, less the ``Observation:`` its agent writes before it."""
    stripped = text.lstrip()
    if stripped.startswith(_REACT_OBSERVATION):
        return stripped.removeprefix(_REACT_OBSERVATION).strip()
    return text


def react_answer(text: str) -> tuple[str, str] | None:
    """A ReAct agent's closing text split into its thought and its answer, else ``None``.

    It opens ``Thought:`` and ends ``Answer: ...`` (LlamaIndex) or ``Final Answer: ...``
    (LangChain): the answer is what follows.
    """
    if not text.lstrip().startswith("Thought:"):
        return None
    found = next(reversed(list(_REACT_ANSWER.finditer(text))), None)  # the last one
    if found is None or not text[found.end() :].strip():
        return None
    return text[: found.start()].strip(), text[found.end() :].strip()


def tool_calls(text: str) -> tuple[list[TaggedCall], str]:
    """The ``<tool_call>`` blocks of assistant text, and the text outside them."""
    calls = []
    for body in _TOOL_CALL.findall(text):
        if has_xml_calls(body):
            calls.extend(xml_calls(body)[0])
            continue
        call = _tagged_call(json_or_python(_ESCAPED_ENDS.sub("", body)))
        if call is not None:
            calls.append(call)
        elif body:
            calls.append(TaggedCall(_opening_name(body) or "tool", {"_raw": body}))
    return calls, _TOOL_CALL.sub("", text).strip()


_NAME_OPENING = re.compile(r'^\{\s*"name"\s*:\s*"([^"\\]+)"')
"""The name a call's JSON opens with, read where the rest is not JSON (a model's unescaped quote
in a long argument: Pi's ``edit`` in NeMo Gym's AnySWE rollouts)."""


def _opening_name(body: str) -> str | None:
    """The name an unreadable call block opens with, else ``None``."""
    found = _NAME_OPENING.match(body)
    return found.group(1) if found else None


def listed_calls(text: str) -> tuple[list[TaggedCall], str]:
    """The calls of Nemotron's ``<TOOLCALL>`` lists in assistant text, and the text outside.

    A list that cannot be read is one call of ``tool`` holding its text (as a Hermes block).
    """
    calls: list[TaggedCall] = []
    for body in _LISTED_CALLS.findall(text):
        parsed = json_or_python(body)
        if parsed == []:  # an empty list calls nothing
            continue
        listed = [_tagged_call(call) for call in parsed] if isinstance(parsed, list) else []
        if listed and all(listed):
            calls.extend(call for call in listed if call is not None)
        elif (single := _tagged_call(parsed)) is not None:
            calls.append(single)
        elif body:
            calls.append(TaggedCall("tool", {"_raw": body}))
    return calls, _LISTED_CALLS.sub("", text).strip()


_ESCAPED_ENDS = re.compile(r"^(?:\\n|\s)+|(?:\\n|\s)+$")
"""Newlines written as the two characters ``\\n`` around a call (hermes-function-calling-v1's
extraction rows: ``<tool_call>\\n{...}\\n</tool_call>``)."""


def _tagged_call(parsed: Any) -> TaggedCall | None:
    """A parsed call: its name and arguments; the name may sit inside the arguments.

    hermes-function-calling-v1's extraction rows write ``{"arguments": {..., "name": ...}}``.
    """
    if not isinstance(parsed, dict):
        return None
    arguments = parsed.get("arguments", parsed.get("args"))
    if isinstance(parsed.get("name"), str):
        return TaggedCall(parsed["name"], arguments)
    if isinstance(arguments, dict) and isinstance(arguments.get("name"), str):
        inner = dict(arguments)
        return TaggedCall(inner.pop("name"), inner)
    return None


def tool_responses(text: str) -> Iterator[tuple[str | None, Any]]:
    """The results in a turn's tags, each its tool's name (when said) and content.

    Each ``<tool_response>`` block (Hermes', or the same fenced: a turn of ```` ```tool_response
    ```` blocks alone), then each item of Nemotron's ``<TOOL_RESPONSE>`` lists (no name: they
    answer the calls in order).
    """
    for body in [*_TOOL_RESPONSE.findall(text), *_fenced_responses(text)]:
        yield from _named_results(body)
    for body in _LISTED_RESPONSES.findall(text):  # Nemotron's: a list, a result a call
        parsed = json_or_python(body)
        for result in parsed if isinstance(parsed, list) else [parsed if parsed else body]:
            yield None, result


def _named_results(body: str) -> Iterator[tuple[str | None, Any]]:
    """One response block's results: each its tool's name (when said) and content.

    A block is one result, ``{"name", "content"}``; or, where every line of it is such an
    object, one result a line: MarketDataGenie's rows answer two parallel calls in one block,
    a line each, each line naming its call, so each is paired with its call by name, as two
    blocks would be.
    """
    parsed = json_or_python(body)
    if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
        yield parsed["name"], parsed.get("content", parsed)
        return
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    each = [json_or_python(line) for line in lines] if len(lines) > 1 else []
    if each and all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in each):
        for item in each:
            yield item["name"], item.get("content", item)
        return
    yield None, parsed if parsed is not None else body


def json_or_python(body: str) -> Any:
    """A tag's or a call's body as JSON, else as a Python literal; ``None`` when neither."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    # Hermes data often writes a call or a response as a Python literal (single quotes, None).
    if len(body) > _MAX_LITERAL:
        return None
    try:
        return python_literal(body)
    except ValueError:
        return None


def python_calls(text: str) -> list[TaggedCall] | None:
    """``[get_weather(city="Paris"), ...]``, as ToolACE writes calls: the calls, else ``None``."""
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith(")]")) or len(stripped) > _MAX_LITERAL:
        return None
    # ToolACE's API names may hold spaces ("Top Songs"): each name is swapped for a placeholder
    # identifier before Python parses the list.
    names: list[str] = []

    def placeholder(match: re.Match[str]) -> str:
        names.append(match.group(2).strip())
        return f"{match.group(1)}_kp_call_{len(names) - 1}("

    try:
        tree = ast.parse(_CALL_NAME.sub(placeholder, stripped), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree.body, ast.List):
        return None
    calls = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or node.args:
            return None
        if not isinstance(node.func, ast.Name) or not node.func.id.startswith("_kp_call_"):
            return None
        name = names[int(node.func.id.removeprefix("_kp_call_"))]
        try:
            arguments = {
                str(keyword.arg): json_value(ast.literal_eval(keyword.value))
                for keyword in node.keywords
            }
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None
        calls.append(TaggedCall(name, arguments))
    return calls or None
