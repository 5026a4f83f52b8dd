"""What every conversation format shares: a row's columns, its envelope, and the reading loop.

A dataset row is one conversation beside other columns (an id, a task, a reward). A format
(:class:`ChatSource`) says which columns usually hold the conversation, whether a list is in its
shape, and how to tell a :class:`StepBuilder` what the conversation holds. The rest is here:
which column is which (the user's option, else a guess, said once per file), the conversation
as nested values or as a JSON string (a prompt's text too, where a reply follows it: a
completion, or a preference row's ``chosen``), the id (``kp:trace:<id>``, else
``kp:trace:<file stem>:<row>``), success from a boolean or a number, the domain and the task.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from knowledgepulse._util.jsonpath import as_object, describe_value
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import moment
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import uncompressed_name
from knowledgepulse.sources._chat._openhands import openhands_finish
from knowledgepulse.sources._chat._text import (
    content_text,
    episode_verdict,
    error_text,
    human_assistant_turns,
    json_or_value,
    react_transcript,
    users_words,
)
from knowledgepulse.sources._chat._tools import (
    declaration_only,
    message_tools,
    prompt_tools,
    row_tools,
)
from knowledgepulse.sources._envelope import (
    CONFIDENCE_KEY,
    DOMAIN_KEY,
    MODEL_KEYS,
    UNDATED,
    PathError,
    TraceOptions,
    assemble,
    first_model,
)
from knowledgepulse.sources._registry import Source
from knowledgepulse.sources._rows import DEFAULT_SUCCESS_THRESHOLD, RowOptions, no_field
from knowledgepulse.sources._steps import StepBuilder, as_text
from knowledgepulse.sources.pydantic_ai import is_output_tool, is_retry_prompt
from knowledgepulse.sources.smolagents._run import FINAL_ANSWER_TOOL
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.item import finite_number
from knowledgepulse.trace.models import PRIVACY_LEVELS

ID_FIELDS = ("id", "_id", "uuid", "conversation_id", "trajectory_id", "sample_id", "row_id")
TASK_FIELDS = (
    "task_id",
    "instance_id",
    "example_id",
    "task",
    "problem_id",
    "question_id",
    "prompt_id",
)
ROLLOUT_ID_FIELDS = tuple(name for name in ID_FIELDS if name != "id")
GYM_TASK_FIELD = "_ng_task_index"
"""NeMo Gym's rollouts: the index of the task a rollout is of (``_ng_rollout_index`` the try)."""
GYM_PROBLEM = ("responses_create_params", "metadata", "problem_statement")
"""NeMo Gym's SWE agent rollouts (its ``anyswe_agent``, running Claude Code, Pi, OpenCode or
Hermes on a SWE-bench task): the task's problem statement, what the agent was asked, in the
request's ``metadata``. Their request's ``input`` is empty, the agent having been given the
task its own way."""
GYM_AVIARY_TASK_FIELD = "task_idx"
"""NeMo Gym's Aviary rollouts: the index of the environment's task, as its agent's request has
it (they write no ``_ng_task_index``)."""
GYM_VERIFIER_TASK_FIELD = "verifier_metadata.task_id"
"""NeMo Gym's rollouts that name their task in the data their verifier is given, as another row's
``task_id`` column does (PinchBench's ``task_sanity``...; OSWorld's rows hold a task's uuid there,
read after their ``_ng_task_index``)."""
ROLLOUT_TASK_FIELDS = ("example_id", "id", *(name for name in TASK_FIELDS if name != "example_id"))
"""A prompt/completion row's: verifiers wrote the example a rollout is of as ``id`` (later
``example_id``), repeated for each rollout, so ``id`` names its task there, not the run."""
SUCCESS_FIELDS = (
    "success",
    "resolved",
    "target",
    "is_success",
    "passed",
    "correct",
    "verified",  # mini-coder's (mini-SWE-agent runs on SWE-smith): its patch passed the tests
    "reward",
    "score",
    "completed",  # hermes-agent's trajectories: false when the run stopped before its answer
)
LABEL_FIELDS = ("kto_tag", "label")
"""Unpaired preference rows' (KTO: TRL's, LLaMA-Factory's) desirable flag, read as the success
when it is a boolean: a ``label`` of another kind (a class, a name) says nothing of the run."""
DOMAIN_FIELDS = ("task_domain", "domain", "category")
REPLY_COLUMNS = ("chosen", "chosen_response")
"""A preference row's preferred reply (DPO, ORPO: TRL's and LLaMA-Factory's rows), read after
the conversation as its completion; LLaMA-Factory keeps it as one turn, TRL as messages or text.
NVIDIA's preference rows (NeMo-Aligner's DPO data, When2Call's) name it ``chosen_response``: one
assistant message beside the ``messages``, or a text."""
PASSED_OVER = frozenset({"rejected", "rejected_messages", "rejected_response"})
"""A preference row's dispreferred reply (ms-swift: ``rejected_messages``; NVIDIA's:
``rejected_response``): never the trace."""
ALPACA_REQUESTS = ("instruction", "query")
"""An alpaca row's request (LLaMA-Factory's ``prompt`` column), its ``input`` after it; ms-swift's
query-response rows name it ``query`` (their reply ``response``, their ``history`` alpaca's)."""
TEXT_OPENINGS = ("prompt", *ALPACA_REQUESTS)
"""Columns whose text is the user's request when a reply follows it (TRL's standard rows;
LLaMA-Factory's alpaca rows, whose ``input`` is joined to the ``instruction`` on a new line)."""
PROMPT_REPLY = "response"
"""A prompt's reply in RL rollout logs that name it ``response``, not TRL's ``completion``
(xtuner's ``rollout_output.jsonl``: ``prompt``, ``response``, ``label``, ``reward``): a text, or
messages, read after the prompt as its completion would be."""
REWARD_COLUMN = "reward"
"""A rollout's reward beside a success column of another name that holds no number (NeMo Gym's
rows: ``resolved``, ``correct``, ``passed`` with the ``reward`` the environment gave): the item's
reward, as the success column's number is where it holds one."""
ROLLOUT_ERROR_COLUMN = "error"
"""The error that stopped a rollout before its end (verifiers' ``results.jsonl``: the exception's
text, a sandbox command that timed out say; ``null`` when the rollout ran to its end): the run
ended on it, after the turns the row keeps, as the failure of the call it stopped in when the
last turn's call has no result."""
ALPACA_QUERIES = ("input", "context")
"""An alpaca row's text after its request: Stanford Alpaca's ``input``; Dolly's ``context``."""
ALPACA_REPLIES = ("output", "response")
"""An alpaca row's reply to its ``instruction`` (Stanford Alpaca's rows, LLaMA-Factory's SFT and
KTO rows: ``output``; Dolly's and torchtune's instruct rows: ``response``), read when the row has
no preferred reply (``chosen``)."""
CALLS_COLUMN = "answers"
"""xLAM's (APIGen's) rows: the calls the model makes for their ``query``, a list of ``{"name",
"arguments"}`` (or its JSON text), read after the query as one assistant turn of those calls.
No result follows them (the rows keep none), so the run ends in its calls, as a chat row whose
last turn is the target call does (Azure AI Foundry's SFT rows)."""
TRANSCRIPT_COLUMN = "chat"
"""Glaive's function-calling rows: the whole conversation as one text of ``USER:`` /
``ASSISTANT:`` / ``FUNCTION RESPONSE:`` turns (:mod:`._glaive`)."""
TRANSCRIPT_SYSTEM = "system"
"""The system prompt beside Glaive's transcript (``SYSTEM: ...``, its label no word of it)."""
MESSAGES_THEN_TEXT = ("input", "output")
"""NVIDIA's Nemotron post-training rows: the conversation as messages in ``input``, the reply as
text in ``output`` (an alpaca row's ``input`` is text: never its conversation)."""
GENAI_REPLIES = {
    "gen_ai.input.messages": "gen_ai.output.messages",
    "gen_ai.prompt": "gen_ai.completion",
}
"""A model call's span attributes saved as a row (the OTel GenAI conventions, and their earlier
names): the request's messages, then the reply's, read after them. Without the reply the row
ended on the tool result its request carried: no answer, read as failed."""
ALPACA_HISTORY = "history"
"""An alpaca row's earlier exchanges, ``[[query, reply], ...]``, read before its instruction."""
TIME_FIELDS = (
    "created_at",
    "timestamp",
    "created",
    "start_time",
    "result.start_time",
    "response.created_at",
)
"""The columns that say when a row's run started, first found first. A dotted name is a field
of an object column: NeMo Gym's tau2 rollouts keep the run's times in ``result`` (its
``timestamp`` is when the run ended); its other rollouts only the ``created_at`` of the
``response`` they hold (a Responses object's: when it was asked for)."""
TURN_TIME_FIELDS = ("ts", "timestamp")
"""A message's own time, read when no column dates the row: the first message's is when the
run started (Cline's SDK sessions: ``ts``, ``Date.now()`` milliseconds; tau2's ``Message``
dumps, as AReaL saves them in rows: ``timestamp``, ISO 8601)."""
# What a training row kp wrote (``--to messages``) keeps that its conversation cannot say.
CONFIDENCE_COLUMN = "kp_confidence"
"""The outcome's confidence, in [0, 1]."""
PRIVACY_COLUMN = "kp_privacy_level"
"""The trace's ``metadata.privacy_level``."""
ANSWER_STEP_COLUMN = "kp_answer_step"
"""Whether the final answer (the last assistant turn) is also the trace's last thought step;
``false``: it is the outcome's ``result_summary`` only."""
ANSWER_TURN_COLUMN = "kp_answer_turn"
"""The index in ``messages`` of the turn whose text is the final answer, where the row does not
end in an assistant turn saying it: the user turn ending the row (an error the run ended on, as
an Agents SDK guardrail's tripwire), or the agent's last message, which the user's reply ending
the row answers (the answer said again after it would teach the model a turn the run never
had); :data:`NO_ANSWER_TURN`: no turn is, the run gave none though it ended on the model's text
(a thought); null: the last assistant turn is the answer, or the run gave none and ended on a
call or its result."""
NO_ANSWER_TURN = -1
"""The :data:`ANSWER_TURN_COLUMN` of a row whose run ended on the model's text yet gave no
answer: its last assistant turn is a step, and no turn stands for the outcome's made-up summary
(``failed``), which would teach the model to say it."""
FAILED_CALLS_COLUMN = "kp_failed_calls"
"""The ids of the calls whose result was an error (the next action its ``error_recovery``)."""
CALL_TEXTS_COLUMN = "kp_call_texts"
"""The ids of the calls whose step's text is their assistant turn's ``content`` (what the agent
said with the call: tau-bench's ``respond``), not a thought before them."""
ERROR_TURNS_COLUMN = "kp_error_turns"
"""The user turns after the objective (numbered from 0) that are errors met outside a tool (a
reply the agent's output could not be read in), not the user's words."""
UNSEEN_ERRORS_COLUMN = "kp_unseen_errors"
"""The failed model calls the run went on after (a retry), which the model never saw: left out
of ``messages``, each ``{"before": n, "content": text}``, the index of the turn it came
before and the error's text (read back, the error again, the next action its recovery)."""


_TRUE_WORDS = frozenset({"true", "yes", "1", "pass", "passed", "success", "resolved", "correct"})
_FALSE_WORDS = frozenset({"false", "no", "0", "fail", "failed", "failure", "unresolved", "wrong"})


@dataclass(frozen=True, slots=True)
class Told:
    """What a conversation said besides its steps."""

    objective: str | None
    answered: bool
    """Whether it ends in the assistant's answer (the success when no column says)."""
    system: str | None = None
    unread: tuple[str, ...] = ()
    """Warnings: what the messages hold that the format's reader does not read."""
    preamble: str | None = None
    """What the first user turn began with that is no word of the user's but was told to the
    model (ADP's SFT rows: the tools' documentation): it follows the system prompt."""


MEDIA_KINDS = frozenset(
    {
        "image",
        "image_url",
        "input_image",
        "audio",
        "input_audio",
        "video",
        "video_url",
        "file",
        "input_file",
    }
)
"""Content parts that hold no text (a picture, a sound, a file) in the chat formats (OpenAI's
Chat Completions and Responses, Anthropic's, LLaMA-Factory's and xtuner's datasets): passed over
knowingly, no step, and said (:func:`media`)."""


_MEDIA_LOST = (
    "a trace holds the text, so a training row written from it (--to messages) has none of them"
)
"""Why media are not kept, as the warnings of :func:`media` and :func:`media_columns` say."""


def media(messages: list[Any]) -> tuple[str, ...]:
    """A warning naming the kinds of picture, sound and file parts the messages hold.

    The trace holds text: those parts are not in it, nor in a training row written from it. One
    text for a file's rows (no message numbers), so that it is said once.
    """
    kinds = {
        part["type"]
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict)
        and isinstance(part.get("type"), str)
        and part["type"] in MEDIA_KINDS
    }
    if not kinds:
        return ()
    return (f"{', '.join(sorted(kinds))} content parts are not kept: {_MEDIA_LOST}",)


MEDIA_COLUMNS = ("images", "videos", "audios")
"""The columns a multimodal dataset row lists its pictures, videos and sounds in, beside text
turns that mark where each goes (LLaMA-Factory's and ms-swift's: ``<image>``, ``<video>``,
``<audio>``)."""


def media_columns(row: Mapping[str, Any]) -> tuple[str, ...]:
    """A warning naming the media columns a row fills.

    As :func:`media` says of content parts: the trace holds text, so they are not in it, nor in
    a training row written from it (whose ``<image>`` marks then point at nothing). One text for
    a file's rows, said once.
    """
    named = [column for column in MEDIA_COLUMNS if _holds_any(row.get(column))]
    if not named:
        return ()
    return (
        f"the {' and '.join(named)} column{'s' if len(named) > 1 else ''} of the rows "
        f"{'are' if len(named) > 1 else 'is'} not kept: {_MEDIA_LOST}",
    )


def _holds_any(value: Any) -> bool:
    """Whether a media column names something: a non-empty list or text."""
    return bool(value) and isinstance(value, list | tuple | str)


class ChatSource(Source):
    """One conversation format: its usual columns, shape test and step reader.

    A subclass sets :attr:`fields` and :attr:`framework` and implements :meth:`matches` and
    :meth:`tell`; recognising a row, converting a file's rows and saying which columns were
    read are the same for every format.
    """

    reads_rows = True
    fields: ClassVar[tuple[str, ...]] = ()
    """The columns that usually hold the conversation, in order of preference."""
    framework: ClassVar[str] = ""
    """The ``metadata.framework`` of its traces."""
    continued: ClassVar[tuple[str, str] | None] = None
    """A pair of columns read one after the other (Responses: ``input`` then ``output``)."""
    wrapped: ClassVar[tuple[tuple[str, str], tuple[str, str]] | None] = None
    """A request column and a reply column that each hold an object, and the key of each that
    holds its part of the conversation (NeMo Gym's rollouts: ``responses_create_params``'s
    ``input``, then ``response``'s ``output``)."""
    completion: ClassVar[str | None] = None
    """A column holding the API's response object to the request in the messages column, whose
    ``choices[0].message`` is the reply (LiteLLM's call logs, as OpenHands writes them:
    ``messages``, ``tools``, ``response``): the conversation's last turn, read after them."""
    system_fields: ClassVar[tuple[str, ...]] = ()
    """Columns holding the system prompt beside the conversation, read when it opens with none."""

    def text_turn(self, role: str, text: str, /) -> Any:
        """A turn of this format saying ``text`` as ``role`` (``user`` or ``assistant``).

        ``None`` (the default): the format keeps no bare text, so a text column is not read.
        """
        return None

    def transcript(self, text: str, system: Any, /) -> list[Any] | None:
        """The turns of a conversation kept as one text (Glaive's ``chat``), in this format.

        The row's ``system`` column opens them. ``None`` (the default): the format reads no
        such text.
        """
        return None

    def calls_turn(self, calls: list[tuple[str, Any]], /) -> Any:
        """A turn of this format in which the assistant calls these ``(name, arguments)``.

        ``None`` (the default): the format keeps no such turn, so xLAM's ``answers`` is not read.
        """
        return None

    def matches(self, turns: list[Any], /) -> bool:
        """Whether a list (a column's value) is a conversation in this format."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement matches()")

    def tell(self, turns: list[Any], builder: StepBuilder, /) -> Told:
        """Tell the builder what the conversation holds; :class:`PathError` for what it cannot."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement tell()")

    def recognises(self, value: Any) -> bool:
        """Whether a file's first record is a row holding a conversation in this format."""
        return isinstance(value, dict) and messages_column(value, self) is not None

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        """Every row of one file as a trace; a row that cannot be read is a located problem."""
        return convert_rows(records, options, self)

    def describe(self, first: Any, count: int, options: TraceOptions) -> str:
        """``read as <format> rows (N traces)``, then the columns read, guessed or named."""
        head = f"read as {self.name} rows ({counted(count, 'trace')})"
        columns = self._columns(first, options)
        return head if columns is None else f"{head}: {columns.describe()}"

    def evidence(self, value: Any) -> str:
        """The column whose value is a conversation in this format."""
        column = messages_column(value, self) if isinstance(value, dict) else None
        return f"column {column!r} holds {self.name} turns ({self.shapes})"

    def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
        """The columns the rows are read from: the user's, else those guessed from ``first``."""
        columns = self._columns(first, options)
        if columns is None:
            return {}
        found = {
            "steps": (
                f"{columns.messages} then {columns.then}" if columns.then else columns.messages
            ),
            "id": columns.id,
            "task": columns.task,
            "success": columns.success,
            "reward": columns.reward,
            "domain": columns.domain,
            "created_at": columns.time,
        }
        return {part: column for part, column in found.items() if column is not None}

    def _columns(self, first: Any, options: TraceOptions) -> Columns | None:
        """The columns of a file whose first record is ``first``; ``None`` when none are found."""
        columns = _columns(first, options.rows, self) if isinstance(first, dict) else None
        return columns if isinstance(columns, Columns) else None


@dataclass(frozen=True, slots=True)
class Columns:
    """The columns of one file's rows: what the user said, else what was guessed."""

    messages: str
    id: str | None
    task: str | None
    success: str | None
    threshold: float
    domain: str | None
    time: str | None = None
    then: str | None = None
    """The column whose messages follow (a prompt's ``completion``, a preference row's
    ``chosen``), when the row has it."""
    reward: str | None = None
    """The column the reward is read from: the success column when it holds a number, else
    :data:`REWARD_COLUMN` beside a success column that holds none (NeMo Gym's ``resolved``,
    ``correct`` or ``passed`` beside its ``reward``)."""

    def describe(self) -> str:
        """The columns the rows are read from, in one line."""
        parts = [f"messages from {self.messages!r}" + (f" then {self.then!r}" if self.then else "")]
        parts.append(f"id from {self.id!r}" if self.id else "id from the row number")
        if self.task:
            parts.append(f"task from {self.task!r}")
        if self.success:
            parts.append(f"success from {self.success!r} (a number counts from {self.threshold:g})")
        else:
            parts.append("success: whether the conversation ends in an answer")
        if self.reward and self.reward != self.success:
            parts.append(f"reward from {self.reward!r}")
        if self.domain:
            parts.append(f"domain from {self.domain!r}")
        if self.time:
            parts.append(f"created_at from {self.time!r}")
        return "; ".join(parts)


def conversation(value: Any) -> list[Any] | None:
    """A column's value as a conversation list: a list, or a JSON string holding one."""
    found = json_or_value(value)
    return found if isinstance(found, list) else None


def messages_column(row: Mapping[str, Any], family: ChatSource) -> str | None:
    """The column of a row holding a conversation in the family's shape: a usual name first."""
    names = [name for name in family.fields if name in row]
    names += [name for name in row if name not in family.fields]
    for name in names:
        if name in PASSED_OVER:
            continue
        found = _opening(row, name, family)
        if (
            found is not None
            and (bool(found) or _asked_nothing(name, family))
            and not family.matches(found)
            and (follower := _follower(row, name, family))
        ):
            # Plain chat messages (role and content, no type: NeMo Gym's request, an `input`
            # column) are known for Responses items by the typed items of the reply after them.
            found = found + (_following(row, follower, family) or [])
        if found and family.matches(found):
            return str(name)
    return None


def _asked_nothing(column: str, family: ChatSource) -> bool:
    """Whether an empty column is a request's input: the reply after it holds the whole run.

    NeMo Gym's GDPval agent sends no input items and keeps the conversation, its system
    prompt and task first, in the response's ``output``.
    """
    return family.wrapped is not None and column == family.wrapped[0][0]


def _empty_column(row: Mapping[str, Any], family: ChatSource) -> str | None:
    """What to say of a row whose usual messages column is there and empty, else ``None``.

    A conversation of no message (``{"messages": []}``, a run that recorded nothing) is no
    trace; the column is the right one, so the message does not ask for another.
    """
    for name in (name for name in family.fields if name in row):
        value = json_or_value(row[name])
        if value is None or (isinstance(value, list | str) and not value):
            return (
                f"column {name!r} holds no message: {describe_value(row)}; a conversation of "
                "no message is no trace"
            )
    return None


def _stray_turn(row: Mapping[str, Any], family: ChatSource) -> str | None:
    """Where a usual column's conversation stops being the family's, when one turn is to blame.

    A conversation whose turns are the family's up to one (a role the format does not have:
    a dataset's own name for the assistant) is no other column's fault: the message names
    that turn and its role, not the column.
    """
    for name in (name for name in family.fields if name in row):
        found = _opening(row, name, family)
        if not found or not family.matches(found[:1]):
            continue
        stray = next((n for n in range(1, len(found)) if not family.matches(found[: n + 1])), None)
        if stray is None:
            continue
        turn = found[stray]
        role = turn.get("role") if isinstance(turn, dict) else None
        what = (
            f"its role {role!r} is not one of the format's"
            if isinstance(role, str)
            else describe_value(turn)
        )
        return (
            f"column {name!r} holds {family.name} messages, but {name}[{stray}] is none: "
            f"{what}; give it one of the format's roles, or name the source that reads it "
            "(source=; kp: --from)"
        )
    return None


def _follower(row: Mapping[str, Any], column: str, family: ChatSource) -> str | None:
    """The column read after ``column``: the family's pair's second, else a preferred reply."""
    if family.continued and column == family.continued[0] and family.continued[1] in row:
        return family.continued[1]
    if family.wrapped and column == family.wrapped[0][0] and family.wrapped[1][0] in row:
        return family.wrapped[1][0]
    reply = next((name for name in REPLY_COLUMNS if name in row), None)
    if reply is not None and column != reply:
        return reply
    if GENAI_REPLIES.get(column) in row:
        return GENAI_REPLIES[column]
    if column == MESSAGES_THEN_TEXT[0] and MESSAGES_THEN_TEXT[1] in row:
        return MESSAGES_THEN_TEXT[1]
    if (
        family.completion
        and column != family.completion
        and column not in ALPACA_REQUESTS
        and _chosen_message(row.get(family.completion)) is not None
    ):
        # A logged call: without its response, the run would end before the model's last
        # reply (the `finish` call that answers) and be read as unanswered.
        return family.completion
    if family.continued and column == family.continued[0] == "prompt" and PROMPT_REPLY in row:
        # No `completion` column (checked first): a rollout log's `response` is the prompt's
        # reply; without it the prompt alone is no run and the row would be refused.
        return PROMPT_REPLY
    if column not in ALPACA_REQUESTS:
        return None
    reply = next((name for name in ALPACA_REPLIES if name in row), None)
    # xLAM's query has no reply: the calls made for it are the model's turn.
    return reply or (CALLS_COLUMN if column == "query" and CALLS_COLUMN in row else None)


def _opening(row: Mapping[str, Any], column: str, family: ChatSource) -> list[Any] | None:
    """A column's conversation; a prompt's text as the user's turn, when a reply follows it."""
    value = row[column]
    if family.wrapped and column == family.wrapped[0][0]:
        # A request's input: its items, or its text, the user's one message.
        asked = _wrapped(value, family.wrapped[0][1])
        if asked == [] and isinstance(problem := _gym_problem(row), str) and problem.strip():
            asked = problem  # a SWE agent's rollout: the problem statement it was given
        if isinstance(asked, str):
            return [{"type": "message", "role": "user", "content": asked}]
        return asked if isinstance(asked, list) else None
    found = conversation(value)
    if found is None and isinstance(value, str) and (said := human_assistant_turns(value)):
        # A conversation in Anthropic's Human / Assistant form (HH-RLHF's chosen): its turns.
        turns = [family.text_turn(role, text) for role, text in said]
        return None if any(turn is None for turn in turns) else turns
    if found is None and column == TRANSCRIPT_COLUMN and isinstance(value, str):
        return family.transcript(value, row.get(TRANSCRIPT_SYSTEM))
    if found is not None or column not in TEXT_OPENINGS or not isinstance(value, str):
        return found
    then = _follower(row, column, family)
    if then is None or not _following(row, then, family):
        return None
    query = _alpaca_query(row) if column in ALPACA_REQUESTS else None
    text = f"{value}\n{query}" if isinstance(query, str) and query.strip() else value
    turn = family.text_turn("user", text)
    return None if turn is None else [turn]


def _gym_problem(row: Mapping[str, Any]) -> Any:
    """A NeMo Gym rollout's problem statement (:data:`GYM_PROBLEM`), else ``None``."""
    value: Any = row
    for key in GYM_PROBLEM:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _alpaca_query(row: Mapping[str, Any]) -> Any:
    """An alpaca row's text after its request: the first of its query columns it has."""
    return next((row[name] for name in ALPACA_QUERIES if name in row), None)


def _following(row: Mapping[str, Any], column: str, family: ChatSource) -> list[Any] | None:
    """The turns a column read after the conversation holds: a list, one turn, or a reply's text."""
    if family.wrapped and column == family.wrapped[1][0]:
        found = _wrapped(row.get(column), family.wrapped[1][1])
        return found if isinstance(found, list) else None
    value = json_or_value(row.get(column))
    reply = _chosen_message(value) if column == family.completion else None
    if reply is not None:
        return [reply]
    if column == CALLS_COLUMN:
        calls = _named_calls(value)
        turn = family.calls_turn(calls) if calls else None
        return None if turn is None else [turn]
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and column in REPLY_COLUMNS:  # LLaMA-Factory's: the one turn
        return [value]
    if isinstance(value, str):
        # An alpaca reply that is a ReAct run written out whole (FireAct's rows, training
        # targets): the turns it transcribes. Only there: a model's own reply (a completion)
        # that writes observations invented them, and stays its text.
        written = react_transcript(value) if column in ALPACA_REPLIES else None
        said = written or [("assistant", value)]
        turns = [family.text_turn(role, text) for role, text in said]
        return None if any(turn is None for turn in turns) else turns
    return None


def _chosen_message(value: Any) -> Mapping[str, Any] | None:
    """A Chat Completions response's reply: its first choice's ``message``; else ``None``.

    Only a response object (``choices``, each a ``message``) is one: an alpaca row's
    ``response`` text is its reply of another kind (:data:`ALPACA_REPLIES`).
    """
    found = json_or_value(value)
    choices = found.get("choices") if isinstance(found, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) and message.get("role") == "assistant" else None


def _wrapped(value: Any, key: str) -> Any:
    """The part of an object column (or its JSON text) under ``key``: a list, text, or ``None``.

    Text is returned as it is: a request's input may be the user's text alone.
    """
    found = json_or_value(value)
    inner = json_or_value(found.get(key)) if isinstance(found, dict) else None
    if isinstance(inner, list) and inner and _transitions(found, inner):
        return inner[-1]
    if isinstance(inner, list):
        return inner
    return inner if isinstance(inner, str) and inner.strip() else None


def _transitions(reply: Mapping[str, Any], items: list[Any]) -> bool:
    """Whether a reply's items are transitions: the conversation after each step, in order.

    NeMo Gym's Aviary agent, asked to return transitions (``contains_transitions``), writes
    in ``output`` the conversation as it stood after each step (the request's input, then the
    model's items and the environment's observations so far): the last holds the whole run.
    """
    return reply.get("contains_transitions") is True and all(isinstance(i, list) for i in items)


def _named_calls(value: Any) -> list[tuple[str, Any]] | None:
    """The calls of xLAM's ``answers``, each one's name and arguments; ``None`` if one is unnamed.

    An empty list (xLAM's irrelevance rows: no tool fits, no call is right) is no turn: the row
    then holds the question alone, no run.
    """
    if not isinstance(value, list):
        return None
    calls = [json_or_value(call) for call in value]
    if not all(isinstance(call, dict) and isinstance(call.get("name"), str) for call in calls):
        return None
    return [(call["name"], json_or_value(call.get("arguments"))) for call in calls]


def convert_rows(
    records: Iterable[Record | Problem], options: TraceOptions, family: ChatSource
) -> Iterator[TraceItem | Problem]:
    """Every row of one file as a trace; a row that cannot be read is a located problem.

    Raises:
        ScorerParameterError: a column named (``id_field`` and the rest) that no row of the
            file has: misspelt, as a ``task_field`` no trace has. The problems met before a
            row has the columns named are held (up to ``_HELD``), told only if one has them.
    """
    columns: Columns | None = None
    held: list[Problem] | None = []  # None: told as they come (columns found, or too many)
    lacking = _named(options.rows)  # the columns named that no row has had yet
    first: Mapping[str, Any] | None = None
    for item in records:
        problem = item if isinstance(item, Problem) else None
        if isinstance(item, Record) and not isinstance(item.value, dict):
            found = describe_value(item.value)
            problem = item.problem((), f"expected a row (a JSON object), found {found}")
        elif isinstance(item, Record) and columns is None:
            row = item.value
            first = row if first is None else first
            lacking = {name: column for name, column in lacking.items() if column not in row}
            said = _columns(row, options.rows, family)
            if isinstance(said, str):
                problem = item.problem((), said)
            else:
                columns, told, held = said, held or [], None
                yield from told
        if problem is None and isinstance(item, Record) and columns is not None:
            try:
                yield _convert_row(item.value, item, columns, options, family)
            except PathError as error:
                yield item.problem(error.path, error.message)
            except ConversionError as error:
                yield item.problem((), str(error))
        elif problem is not None and held is not None and len(held) < _HELD:
            held.append(problem)
        elif problem is not None:
            yield from held or ()
            held = None
            yield problem
    if columns is None and first is not None and lacking:
        name, column = next(iter(lacking.items()))
        keys = ", ".join(sorted(map(str, first))[:30])
        raise no_field(name, column, "row", f"; the rows have {keys}", "name a column they have")
    yield from held or ()


_HELD = 1000
"""The most problems held while no row has had the columns named (a large file's are told)."""


def _named(said: RowOptions) -> dict[str, str]:
    """The columns the user named, by setting: ``{"id_field": "row_id"}``."""
    named = {
        "messages_field": said.messages_field,
        "id_field": said.id_field,
        "success_field": said.success_field,
        "domain_field": said.domain_field,
    }
    return {name: column for name, column in named.items() if column is not None}


def _columns(row: Mapping[str, Any], said: RowOptions, family: ChatSource) -> Columns | str:
    # A column named that the file's first row lacks is a misspelling, not a column to guess
    # past: read without it, the rows would say other successes and ids than the user meant.
    # Each row is asked until one has it: the message is the row's own (not "the first row").
    # (A later row may lack one: a dataset joined from two sources.) The task is read as
    # select reads a task field: rows without it are one task, and the summary says so.
    absent = [
        f"{column!r} ({name}; kp: --{name.replace('_', '-')})"
        for name, column in _named(said).items()
        if column not in row
    ]
    if absent:
        return (
            f"the row has no column {' or '.join(absent)}: "
            f"{describe_value(row)}; name a column the rows have"
        )
    messages = said.messages_field or messages_column(row, family)
    if messages is None:
        return (
            _stray_turn(row, family)
            or _empty_column(row, family)
            or (
                f"no column holds {family.name} messages: {describe_value(row)}; "
                "name it with messages_field (kp: --messages-field)"
            )
        )
    then = _follower(row, messages, family) if messages in row else None
    ids: tuple[str, ...] = ID_FIELDS
    tasks: tuple[str, ...] = TASK_FIELDS
    if family.continued is not None and then == family.continued[1]:
        # prompt/completion rollouts: verifiers' `id` (later `example_id`)
        # names the example, the same in each of its rollouts: the task, not the run.
        ids, tasks = ROLLOUT_ID_FIELDS, ROLLOUT_TASK_FIELDS
    if family.wrapped is not None and then == family.wrapped[1][0]:
        # NeMo Gym's rollouts: the task's index, and any id its item carries (`id`, `row_id`),
        # is the same in each rollout of a task; no column names the rollout: its row does.
        ids = ()
        tasks = (
            GYM_TASK_FIELD,
            GYM_AVIARY_TASK_FIELD,
            GYM_VERIFIER_TASK_FIELD,
            *ROLLOUT_TASK_FIELDS,
        )
    success = (
        said.success_field
        or _first_present(row, SUCCESS_FIELDS, labels=_says_success)
        or _first_present(row, LABEL_FIELDS, labels=lambda value: isinstance(value, bool))
    )
    return Columns(
        messages=messages,
        id=said.id_field or _first_present(row, ids),
        task=said.task_field or _first_present(row, tasks, labels=_names_label),
        success=success,
        reward=_reward_column(row, success),
        threshold=(
            DEFAULT_SUCCESS_THRESHOLD if said.success_threshold is None else said.success_threshold
        ),
        domain=said.domain_field or _first_present(row, DOMAIN_FIELDS, labels=_names_label),
        time=next((name for name in TIME_FIELDS if moment(_field(row, name)) is not None), None),
        then=then,
    )


def _first_present(
    row: Mapping[str, Any],
    names: tuple[str, ...],
    *,
    labels: Callable[[Any], bool] = lambda value: True,
) -> str | None:
    """The first of ``names`` whose value in ``row`` is there and of the kind ``labels`` takes.

    A dotted name is a field of an object column (:func:`_field`).
    """
    return next(
        (name for name in names if (value := _field(row, name)) is not None and labels(value)),
        None,
    )


def _says_success(value: Any) -> bool:
    return _success(value, DEFAULT_SUCCESS_THRESHOLD) is not None


def _names_label(value: Any) -> bool:
    """Whether a value can name a task or domain (text or a number; NaN: none given)."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def convert_conversation(
    turns: list[Any],
    at: Record,
    options: TraceOptions,
    family: ChatSource,
    beside: Mapping[str, Any] | None = None,
    *,
    framework: str | None = None,
) -> TraceItem:
    """One conversation kept as a list, no row around it, read as a row holding it would be.

    The trace is located at ``at`` (where the conversation starts) and carries no row: a file
    of messages is one run, and nothing of it is written back as a dataset row. ``beside``: the
    columns the file says of the run apart from its messages (its id, its start), as a row
    would hold them. ``framework``: the one that wrote the messages, where it is not the chat
    format's (LangChain's, whose dumps are read as Chat Completions messages). A
    :class:`PathError`'s path starts at the conversation (its turn's index first).
    """
    row = {**(beside or {}), family.fields[0]: turns}
    columns = _columns(row, RowOptions(), family)
    if isinstance(columns, str):
        raise ConversionError(columns)
    try:
        return _convert_row(
            row,
            Record(at.location, row),
            columns,
            options,
            family,
            as_row=False,
            framework=framework,
        )
    except PathError as error:
        raise PathError(error.path[1:], error.message) from error


def _convert_row(
    row: Mapping[str, Any],
    record: Record,
    columns: Columns,
    options: TraceOptions,
    family: ChatSource,
    *,
    as_row: bool = True,
    framework: str | None = None,
) -> TraceItem:
    messages, columns = _conversation(row, columns, family)
    whole, error_turns = _with_unseen_errors(row, messages)
    builder = _builder(row, error_turns)
    try:
        told = family.tell(whole, builder)
    except PathError as error:
        raise PathError((columns.messages, *error.path), error.message) from error
    if _told_no_answer(row):
        builder.no_answer()  # the last assistant turn is a step: the run gave no answer
    if (stopped := _rollout_error(row)) is not None:
        if builder.awaits_result:  # the call it stopped in (a sandbox command timed out): failed
            builder.tool_result("", error=stopped)
        else:
            builder.error(stopped, terminal=True)
    told = _with_system(told, row, family)
    success = told.answered and builder.final_answer is not None  # no user turn came after it
    reward = None
    # A null (or a DataFrame's NaN) says no outcome, as a row without the column does: an
    # ungraded run, which ranks last by reward, not a row that cannot be read.
    if columns.success is not None and not _is_null(row.get(columns.success)):
        said = _success(row[columns.success], columns.threshold)
        if said is None:
            raise PathError(
                (columns.success,),
                f"expected a boolean or a number for success, found "
                f"{describe_value(row[columns.success])}",
            )
        success = said
        reward = _reward(row.get(columns.reward)) if columns.reward else None
    task = _column_label(row, columns.task, "task")
    domain = _column_label(row, columns.domain, "domain")
    kept = {DOMAIN_KEY: domain, CONFIDENCE_KEY: row.get(CONFIDENCE_COLUMN)}
    return assemble(
        builder,
        source=family.name,
        source_id=_source_id(row, record, columns),
        success=success,
        options=options,
        objective=told.objective,
        fallback_objective=told.system,
        created_at=_started(row, columns, messages),
        result_summary=_told_answer(row, messages) or builder.final_answer,
        framework=framework or family.framework,
        model=_model(row, family, messages),
        metadata=kept,
        warnings=told.unread + media_columns(row),
        source_extra={"row": record.location.index} if as_row else None,
        content_hint=family.content_hint,
        location=record.location,
        row=record if as_row else None,
        task=task,
        reward=reward,
        privacy_level=_privacy_level(row.get(PRIVACY_COLUMN)),
        # What a training row of the trace opens with and lists, as the source row had them.
        tools=row_tools(row) or message_tools(messages) or prompt_tools(told.system),
        system=_system_prompt(told),
    )


def _system_prompt(told: Told) -> str | None:
    """The system prompt a training row opens with, where there is one to open with.

    None without an objective (the system text stood in for it), nor where it only declares the
    tools in Kimi's tokens (the row's tools list them).
    """
    if told.objective is None or declaration_only(told.system):
        return None
    return told.system


def _model(row: Mapping[str, Any], family: ChatSource, messages: list[Any]) -> str | None:
    """The model a row names: its ``model`` or ``model_name`` column, else its reply's.

    A Responses object's ``model`` is its own column; NeMo Gym's row wraps its ``response``, a
    logged call (LiteLLM's, as OpenHands writes them) its Chat Completions ``response``.
    An API's reply saved as a turn (Anthropic's ``Message``, ``{"type": "message", "role":
    "assistant", "content", "model", ...}``) names the model that wrote it, and so does a Cline
    SDK session's assistant turn, by its ``modelInfo.id``: the last such. A model call's span
    attributes saved as a row name it as the span does (``gen_ai.response.model``...).
    """
    reply = json_or_value(row.get(family.wrapped[1][0])) if family.wrapped else None
    logged = json_or_value(row.get(family.completion)) if family.completion else None
    said = first_model(
        row.get("model"),
        row.get("model_name"),
        *map(row.get, MODEL_KEYS),
        as_object(reply).get("model"),
        as_object(logged).get("model"),
    )
    if said is not None:
        return said
    # The turns only when no column names it: most rows' turns name none, and reading them
    # all was a twentieth of a row's conversion.
    return first_model(
        *(
            name
            for turn in reversed(messages)
            if isinstance(turn, dict)
            and ("model" in turn or "modelInfo" in turn)
            and turn.get("role") == "assistant"
            for name in (turn.get("model"), as_object(turn.get("modelInfo")).get("id"))
        )
    )


def _field(row: Mapping[str, Any], name: str) -> Any:
    """A column's value; a dotted name (not a column itself) is a field of an object column."""
    if name in row:
        return row[name]
    column, _, key = name.partition(".")
    found = row.get(column)
    return found.get(key) if key and isinstance(found, Mapping) else None


def _started(row: Mapping[str, Any], columns: Columns, messages: list[Any]) -> datetime:
    """When the row's run started: its time column, else its first message's own time."""
    if columns.time is not None and (found := moment(_field(row, columns.time))) is not None:
        return found
    first = messages[0] if messages and isinstance(messages[0], Mapping) else {}
    times = (moment(said) for name in TURN_TIME_FIELDS if (said := first.get(name)) is not None)
    return next((time for time in times if time is not None), UNDATED)


def _conversation(
    row: Mapping[str, Any], columns: Columns, family: ChatSource
) -> tuple[list[Any], Columns]:
    """The row's conversation, and the columns with the one it was found in."""
    if columns.messages not in row:
        # A row of another shape in the file (a dataset joined from two sources): its own
        # column, when one holds a conversation.
        found = messages_column(row, family)
        if found is None:
            raise PathError(
                (), f"the row has no {columns.messages!r} column: {describe_value(row)}"
            )
        columns = dataclasses.replace(columns, messages=found)
    messages = _opening(row, columns.messages, family)
    if messages is None and _follower(row, columns.messages, family) == CALLS_COLUMN:
        raise PathError(
            (CALLS_COLUMN,),
            f"expected a list of calls, each {{name, arguments}}, found "
            f"{describe_value(row[CALLS_COLUMN])}",
        )
    if messages is None:
        raise PathError(
            (columns.messages,),
            f"expected a list of messages (or a JSON string of one), found "
            f"{describe_value(row[columns.messages])}",
        )
    if columns.messages in ALPACA_REQUESTS:
        messages = _history(row, family) + messages
    then = _follower(row, columns.messages, family)
    rest = _following(row, then, family) if then is not None else None
    wrapped_reply = family.wrapped is not None and then == family.wrapped[1][0]
    if rest and (then in REPLY_COLUMNS or wrapped_reply) and _repeats(rest, messages):
        # A `chosen` holding the whole conversation (TRL's implicit prompt) beside a column
        # that holds it too, or its opening (UltraFeedback binarized's `messages`, the chosen
        # conversation again; `prompt` as text), or a reply's last transition, which opens
        # with the request's input: the conversation is the reply, not both one after the
        # other, which would repeat the exchange as a second user turn.
        return rest, columns
    return (messages + rest if rest else messages), columns


def _repeats(reply: list[Any], messages: list[Any]) -> bool:
    """Whether a preferred reply's turns open with the conversation's own turns."""
    return len(reply) >= len(messages) and reply[: len(messages)] == messages


def _history(row: Mapping[str, Any], family: ChatSource) -> list[Any]:
    """An alpaca row's earlier exchanges as turns (LLaMA-Factory reads them so); none: ``[]``.

    Raises:
        PathError: an exchange is not a ``[query, reply]`` pair of texts.
    """
    pairs = json_or_value(row.get(ALPACA_HISTORY))
    if _is_null(pairs):
        return []
    if not isinstance(pairs, list):
        raise PathError(
            (ALPACA_HISTORY,),
            f"expected a list of [query, reply] pairs, found {describe_value(pairs)}",
        )
    turns: list[Any] = []
    for index, pair in enumerate(pairs):
        if not (
            isinstance(pair, list | tuple)
            and len(pair) == 2
            and all(isinstance(text, str) for text in pair)
        ):
            raise PathError(
                (ALPACA_HISTORY, index),
                f"expected a [query, reply] pair of texts, found {describe_value(pair)}",
            )
        turns += [family.text_turn("user", pair[0]), family.text_turn("assistant", pair[1])]
    return turns


def _with_system(told: Told, row: Mapping[str, Any], family: ChatSource) -> Told:
    """What the conversation told, with the row's system column when it opened with no system.

    The column is text, a list of text blocks (Anthropic's ``system`` parameter), or a Content
    of text parts (Gemini's ``systemInstruction``). A row holding the request made as an object
    (NeMo Gym's ``responses_create_params``) keeps it there, beside the request's input. The
    conversation's :attr:`Told.preamble` follows the system prompt.
    """
    system = told.system
    if system is None:
        places = [row]
        request = json_or_value(row.get(family.wrapped[0][0])) if family.wrapped else None
        if isinstance(request, Mapping):
            places.append(request)
        said = (_system_text(place.get(name)) for place in places for name in family.system_fields)
        system = next((text for text in said if text and text.strip()), None)
    if told.preamble:
        system = f"{system}\n\n{told.preamble}" if system else told.preamble
    return told if system == told.system else dataclasses.replace(told, system=system)


def _system_text(value: Any) -> str | None:
    """A system column's text: text as it is, a list of text blocks (or its JSON) joined."""
    blocks = json_or_value(value)
    if isinstance(blocks, Mapping) and isinstance(blocks.get("parts"), list):  # Gemini's Content
        blocks = blocks["parts"]
    return content_text(blocks if isinstance(blocks, list) else value)


def _builder(row: Mapping[str, Any], error_turns: frozenset[int]) -> StepBuilder:
    """A step builder told what a row kp wrote keeps in its own columns (none: the defaults).

    ``error_turns``: the user turns after the objective that are errors (:func:`_error_turns`).
    """
    answer_step = row.get(ANSWER_STEP_COLUMN)
    failed = row.get(FAILED_CALLS_COLUMN)
    texts = row.get(CALL_TEXTS_COLUMN)
    return StepBuilder(
        answer_is_step=answer_step is not False,
        written_by_kp=answer_step is not None,
        failed_calls=frozenset(map(str, failed)) if isinstance(failed, list) else None,
        call_texts=frozenset(map(str, texts)) if isinstance(texts, list) else frozenset(),
        error_turns=error_turns,
    )


def _error_turns(row: Mapping[str, Any]) -> frozenset[int]:
    """The user turns after the objective that a row kp wrote says are errors (none: none)."""
    error_turns = row.get(ERROR_TURNS_COLUMN)
    if not isinstance(error_turns, list):
        return frozenset()
    return frozenset(n for n in error_turns if isinstance(n, int))


def _with_unseen_errors(
    row: Mapping[str, Any], messages: list[Any]
) -> tuple[list[Any], frozenset[int]]:
    """A row kp wrote with the errors it left out (:data:`UNSEEN_ERRORS_COLUMN`) put back.

    Each is a user turn before the turn it names, an error; returned with the user turns after
    the objective that are errors, numbered again to count them. A row that leaves none out is
    as it is.
    """
    written_errors = _error_turns(row)
    unseen = row.get(UNSEEN_ERRORS_COLUMN)
    if not isinstance(unseen, list) or not unseen:
        return messages, written_errors
    before: dict[int, list[str]] = {}
    for error in unseen:
        if isinstance(error, Mapping) and isinstance(error.get("before"), int):
            before.setdefault(error["before"], []).append(str(error.get("content") or ""))
    whole: list[Any] = []
    errors: set[int] = set()
    number = written = -1  # a user turn's number, in the whole row and in the written one
    for index in range(len(messages) + 1):
        for text in before.get(index, ()):
            whole.append({"role": "user", "content": text})
            errors.add(number)
            number += 1
        if index == len(messages):
            break
        turn = messages[index]
        whole.append(turn)
        if isinstance(turn, Mapping) and turn.get("role") == "user":
            if written in written_errors:
                errors.add(number)
            number, written = number + 1, written + 1
    errors.discard(-1)  # the objective's number: no error comes before it
    return whole, frozenset(errors)


def _told_answer(row: Mapping[str, Any], messages: list[Any]) -> str | None:
    """The final answer a row kp wrote says in an earlier turn (:data:`ANSWER_TURN_COLUMN`)."""
    index = row.get(ANSWER_TURN_COLUMN)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(messages):
        return None
    turn = messages[index]
    return content_text(turn.get("content")) if isinstance(turn, Mapping) else None


def _rollout_error(row: Mapping[str, Any]) -> str | None:
    """The error that stopped a rollout, as its row says (:data:`ROLLOUT_ERROR_COLUMN`).

    None where the row says none: a null, an empty text or another kind of value says the
    rollout ran to its end.
    """
    value = row.get(ROLLOUT_ERROR_COLUMN)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _told_no_answer(row: Mapping[str, Any]) -> bool:
    """Whether a row kp wrote says its run gave no answer though it ends on the model's text."""
    index = row.get(ANSWER_TURN_COLUMN)
    return isinstance(index, int) and index == NO_ANSWER_TURN


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _privacy_level(value: Any) -> str:
    """The row's privacy level: ``private`` when it has none.

    Raises:
        PathError: the row names a level there is not.
    """
    if value is None:
        return "private"
    if value not in PRIVACY_LEVELS:
        raise PathError(
            (PRIVACY_COLUMN,),
            f"expected one of {', '.join(PRIVACY_LEVELS)}, found {describe_value(value)}",
        )
    return str(value)


def _source_id(row: Mapping[str, Any], record: Record, columns: Columns) -> str:
    if columns.id is not None:
        value = _label(row.get(columns.id))
        if value is not None:
            return value
    stem = Path(uncompressed_name(record.location.file)).stem
    stem = stem.strip("<>") or "rows"
    return f"{stem}:{record.location.index or 0}"


def _column_label(row: Mapping[str, Any], column: str | None, what: str) -> str | None:
    """A row's task or domain label; a PathError for a value that names none (a list, say)."""
    if column is None:
        return None
    value = _field(row, column)
    if value is None or _names_label(value):
        return _label(value)
    raise PathError(
        (column,),
        f"expected a text or a number naming the {what}, found {describe_value(value)}; "
        f"name the column that does with {what}_field (kp: --{what}-field)",
    )


def _label(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if finite_number(value) is not None:
        return str(value)
    return None


def _reward_column(row: Mapping[str, Any], success: str | None) -> str | None:
    """The column a row's reward is read from (:attr:`Columns.reward`), if any."""
    if success is not None and _reward(row.get(success)) is not None:
        return success
    if success is not None and _reward(row.get(REWARD_COLUMN)) is not None:
        return REWARD_COLUMN
    return None


def _reward(value: Any) -> float | None:
    """A success column's value as a reward: a finite number (a numeric string too), else none."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    return finite_number(value)


def _success(value: Any, threshold: float) -> bool | None:
    if isinstance(value, bool):
        return value
    said = success_word(value)
    if said is not None:
        return said
    number = _reward(value)
    return None if number is None else number >= threshold


def success_word(value: Any) -> bool | None:
    """What a word says of a run (``pass``, ``FAIL``, ``resolved``...); ``None`` if no such word."""
    word = value.strip().lower() if isinstance(value, str) else None
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


_FINISH = "Finish"
"""ToolBench's (ToolLLaMA's) closing call, whose ``return_type`` is ``give_answer`` (with the
``final_answer``: the answer, not a tool call) or ``give_up_and_restart`` (the model's call that
ends the run with none)."""


MIRASCOPE_FORMAT_TOOL = "__mirascope_formatted_output_tool__"
"""Mirascope's output tool (its ``FORMAT_TOOL_NAME``): given a ``format`` in tool mode, Mirascope
tells the model to answer by calling it, never runs it, and reads the call's arguments as the
structured output, as Pydantic AI reads ``final_result``'s. Mirascope knows it by this prefix."""


def _answers(name: str) -> bool:
    """Whether a call is the answer, not a tool: an output tool, or smolagents' own.

    The output tools are Pydantic AI's and Mirascope's. smolagents' ``ToolCallingAgent`` ends a
    run by calling ``final_answer``, which it runs itself and never reports to the model: a
    recorded conversation ends in that call. So does a Mirascope conversation asked for a
    structured output in tool mode: read as a tool call never answered, it was a run cut short
    with no answer.
    """
    return (
        is_output_tool(name) or name == FINAL_ANSWER_TOOL or name.startswith(MIRASCOPE_FORMAT_TOOL)
    )


def _answer_text(name: str, arguments: Any) -> str | None:
    """The answer a closing call gives: ``final_answer``'s ``answer``; the output as it is."""
    found = json_or_value(arguments)
    if name == FINAL_ANSWER_TOOL and isinstance(found, Mapping) and "answer" in found:
        return as_text(found["answer"])
    return as_text(arguments)


def _finish(name: str, arguments: Any) -> dict[str, Any] | None:
    """The arguments of a ToolBench ``Finish`` call, else ``None`` (any other call)."""
    if name != _FINISH:
        return None
    arguments = json_or_value(arguments)
    return arguments if isinstance(arguments, dict) and "return_type" in arguments else None


@dataclass
class Calls:
    """A conversation's tool calls as they are told: results find their call by id or order.

    A result that names no call (ShareGPT observations, Hermes responses without a name) belongs
    to the earliest call not yet answered. A call to Pydantic AI's output tool (``final_result``)
    is the answer, its arguments the final output; its result ("Final result processed.") is
    dropped; so is smolagents' ``final_answer`` (its ``answer``). Of several output calls asked
    for at once, the first is the answer: Pydantic AI processes it and answers the others
    "Output tool not used - a final result was already processed.". ToolBench's ``Finish``
    call ends the run: with its ``final_answer`` when it gives one, else (it gave up) the call
    stays the model's, and the run ends in it with no answer. OpenHands' ``finish`` call
    ends the run with its ``message`` as the answer (:func:`openhands_finish`); a result that
    answers it (by id) is dropped.
    """

    builder: StepBuilder
    names: dict[str, str] = dataclasses.field(default_factory=dict)
    pending: list[str] = dataclasses.field(default_factory=list)
    answered: bool = False
    """Whether the output tool (or a closing call) gave the answer, and so the run succeeded."""
    finished: set[str] = dataclasses.field(default_factory=set)
    """The ids of OpenHands' ``finish`` calls: no tool's, so no result of theirs is told."""
    closing: bool = False
    """Whether an output call was asked for since the last result or text: later ones in the
    same turn are not used."""
    verdict: bool | None = None
    """The environment's own verdict on the answer the run ended with (ReAct's "Episode
    finished, reward = 0"), when it gave one: a wrong answer is no success."""

    def request(
        self,
        name: str,
        arguments: Any = None,
        call_id: str | None = None,
        text: str | None = None,
        *,
        mcp_server: str | None = None,
    ) -> None:
        """A tool call the assistant asked for (``text``: its step's own text, if kept).

        ``mcp_server``: the MCP server that has the tool, where the call names one: kept with
        the call itself, so a call that never ran (refused, unanswered) keeps it too.
        """
        finish = _finish(name, arguments)
        if finish is not None and finish["return_type"] == "give_answer":
            self.builder.answer(as_text(finish.get("final_answer")))
            self.answered = self.builder.final_answer is not None
            return
        # A Finish that gives up stays the model's call: the run ends in it, with no answer.
        closing = openhands_finish(name, arguments)
        if closing is not None:
            self.finished.update([call_id] if call_id else [])
            self.builder.answer(closing.message)
            # Its task_completed "false" (or "partial"): the agent says it did not do the task.
            self.answered = self.builder.final_answer is not None and closing.completed
            return
        if call_id:
            self.names[call_id] = name
        if _answers(name):
            if not self.closing:
                self.closing = True
                self.builder.answer(_answer_text(name, arguments), said=False)
                self.answered = self.builder.final_answer is not None
            return
        self.pending.append(name)
        self.builder.tool_request(
            name, arguments, call_id=call_id, text=text, mcp_server=mcp_server
        )

    def said(self, text: str | None) -> None:
        """The assistant's text to the user (not its reasoning): a user turn may answer it."""
        self.closing = False
        self.builder.thought(text, said=True)

    def user(self, text: str | None) -> None:
        """A user's turn after the objective: their words, less what the client added.

        The assistant text just before it is the ``respond`` call the turn answers (see
        :meth:`StepBuilder.user_turn`); the system reminders a coding agent adds are no words of
        the user's. Pydantic AI's retry prompt ("Validation feedback: ... Fix the errors and try
        again."), sent as user text when it rejects a reply, is an evident error.
        """
        self.closing = False
        if is_retry_prompt(text):  # Pydantic AI's feedback on a reply it rejected: no user's words
            self.builder.error(text)
            return
        self.builder.user_turn(users_words(text))

    def closed(self, text: str | None) -> None:
        """The environment's reply to the action that ended the run (ReAct's ``finish[X]``).

        No tool ran and no user spoke: the reply is no step (a ``respond`` observation would
        take the answer for words said to the user), but the reward it gives is the run's
        verdict.
        """
        self.closing = False
        self.verdict = episode_verdict(text)

    def result(
        self,
        name: str | None,
        output: Any,
        *,
        call_id: str | None = None,
        is_error: bool | None = None,
        mcp_server: str | None = None,
    ) -> None:
        """A tool's result; ``is_error`` when the format says, else the text is read for it.

        ``mcp_server``: the MCP server that ran it, where the format names one.
        """
        self.closing = False
        if call_id is not None and call_id in self.finished:
            return
        known = name or self.names.get(call_id or "") or (self.pending[0] if self.pending else "")
        known = known or "tool"
        told = self.builder.failed_calls
        if is_error is None and told is not None and call_id is not None:
            is_error = call_id in told
        if is_error is None:  # a tool's ModelRetry comes back as Pydantic AI's retry prompt
            failed = error_text(output) or (output if is_retry_prompt(output) else None)
        else:
            failed = (as_text(output) or "error") if is_error else None
        if _answers(known):  # an output the agent rejected is an error; else "processed"
            self.builder.error(failed)
            self.answered = self.answered and not failed
            return
        if known in self.pending:
            self.pending.remove(known)
        self.builder.tool_result(
            known,
            output=None if failed else output,
            error=failed,
            call_id=call_id,
            mcp_server=mcp_server,
        )
