"""Inspect AI evaluation logs (``inspect_ai``'s ``EvalLog`` written as ``.json``) as traces.

A log is one JSON document: the run's ``version``, ``status`` (``success``, ``error``,
``cancelled``...), ``eval`` (its ``task``, ``run_id``, ``model``...), ``error`` and ``samples``.
Each sample, once per epoch, is a run of the agent and one trace, its id
``<run_id>:<sample id>:<epoch>`` (the task's name where the log has no run id) and its task
``<task>/<sample id>``, so that the epochs of one sample are runs of one task.

A sample's ``messages`` are Inspect's ``ChatMessage`` list, close to OpenAI Chat messages; they
are told to the Chat Completions reader once Inspect's own shapes are put in its terms: a tool
call is ``{id, function: <name>, arguments: {...}}`` (the name, not an object), content parts
are ``text`` and ``reasoning`` (its text in ``reasoning``; when ``redacted``, as OpenAI's encrypted
reasoning is, its ``summary``, if any) and media
(dropped), and a ``tool`` message names its ``function`` and, when the call failed, its
``error`` (``{type, message}``): that result is an evident error, its message the observation,
and the agent's next action its ``error_recovery``. A tool message without an ``error`` is no
failure, whatever its text says. The objective is the first user message (the sample's ``input``
where the messages hold none), the answer the last assistant text (the sample's ``output`` where
no message holds it: its ``completion``, else its first choice's message, as Inspect reads it;
a sample whose messages hold no model turn at all, as Inspect's human agent leaves them, has
that output as its one step).

Success is the sample's scores (a log of version 1 keeps its one scorer's as ``score``), read
as Inspect's ``value_to_float`` reads them: ``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, booleans,
numbers and numeric text as they are, ``yes``/``true`` 1 and ``no``/``false`` 0; the first
scorer whose value reads so is the reward, a success at or above 0.5 (the rows' default
threshold). A sample with no readable score succeeded when it
ends in the answer. A sample's ``error`` (the solver raised, a limit was hit) ends its trace in
that error, a failure; a log whose ``status`` is not ``success`` warns on each of its samples,
and one with no sample is a problem that says why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import openai_chat
from knowledgepulse.sources._chat._text import content_text
from knowledgepulse.sources._envelope import (
    PathError,
    TraceOptions,
    assemble,
    finished,
    last_model,
)
from knowledgepulse.sources._rows import DEFAULT_SUCCESS_THRESHOLD
from knowledgepulse.sources._sessions._call_ids import unique_call_ids
from knowledgepulse.sources._sessions._documents import documents
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Inspect writes each sample's messages into its log unless log_samples=False"
SOURCE = "inspect-ai"
SCORE_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's ``CORRECT``, ``PARTIAL``, ``INCORRECT`` and ``NOANSWER``, as ``value_to_float``
maps them."""
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def recognises(value: Any) -> bool:
    """Whether a record is an ``EvalLog``: an ``eval`` spec naming its task, and a ``status``."""
    spec = value.get("eval") if isinstance(value, dict) else None
    return (
        isinstance(spec, dict)
        and isinstance(spec.get("task"), str)
        and isinstance(value.get("status"), str)
        and isinstance(value.get("version"), int)
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace per sample and epoch of each log; a log that holds no sample is a problem."""
    expected = "{version, status, eval: {task, ...}, samples: [...]}"
    for item in documents(records, recognises, what="an Inspect evaluation log", expected=expected):
        if isinstance(item, Problem):
            yield item
        else:
            yield from _log(item, options)


def _log(record: Record, options: TraceOptions) -> Iterator[TraceItem | Problem]:
    log = record.value
    samples = log.get("samples")
    ended = _ended(log)
    if not isinstance(samples, list) or not samples:
        # A dataset of no sample (Langtrace's example read an empty one) ran nothing: the log
        # says so in ``eval.dataset.samples``, and rerunning with samples logged would not help
        dataset = as_object(as_object(log.get("eval")).get("dataset"))
        why = (
            f"the evaluation {ended} before it logged a sample: fix that and run it again"
            if ended
            else "the evaluation's dataset held no sample (eval.dataset.samples is 0): nothing "
            "was run; give the task a dataset with samples"
            if dataset.get("samples") == 0
            else "the log holds no sample (written with log_samples=False, it keeps only the "
            "results): run the evaluation again with samples logged"
        )
        yield record.problem(("samples",) if "samples" in log else (), f"no run to read: {why}")
        return
    warnings = (f"the evaluation {ended}: this sample is read as it was logged",) if ended else ()
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("messages"), list):
            found = sample.get("messages") if isinstance(sample, dict) else sample
            where = (
                ("samples", index, "messages") if isinstance(sample, dict) else ("samples", index)
            )
            yield record.problem(
                where, f"expected a sample's list of messages, found {describe_value(found)}"
            )
            continue
        yield finished(partial(_sample, record, index, options, warnings), record)


def _ended(log: Mapping[str, Any]) -> str | None:
    """How a log that did not finish well ended (``ended in an error: ...``), else ``None``."""
    status = log["status"]
    if status == "success":
        return None
    message = as_string(as_object(log.get("error")).get("message"))
    if status == "error":
        return f"ended in an error ({message})" if message else "ended in an error"
    return f"did not finish (status {status!r})"


def _sample(
    record: Record, index: int, options: TraceOptions, warnings: tuple[str, ...]
) -> TraceItem:
    log, sample = record.value, record.value["samples"][index]
    spec = log["eval"]
    # an id the model reuses in a later turn names a new call (_call_ids says why)
    messages = unique_call_ids(sample["messages"], answers=_is_result, key="tool_call_id")
    builder = StepBuilder(failed_calls=_failed_calls(messages))
    try:
        told = openai_chat.tell([_chat(message) for message in messages], builder)
    except PathError as wrong:
        raise PathError(("samples", index, "messages", *wrong.path), wrong.message) from wrong
    output = as_object(sample.get("output"))
    if not any(_said_by_model(message) for message in messages):
        # Inspect's human agent (``human_agent()``) sets the sample's output without adding it
        # to the messages: the output's message is what was answered, the only step there is
        builder.answer(_output_text(output))
    error = as_string(as_object(sample.get("error")).get("message"))
    if error is not None:  # the solver raised or a limit was hit: the run ends there
        builder.error(f"the sample failed: {error}", terminal=True)
    reward = _reward(_scores(sample))
    answered = told.answered and builder.final_answer is not None
    passed = reward is not None and reward >= DEFAULT_SUCCESS_THRESHOLD
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    run = as_string(spec.get("run_id")) or spec["task"]
    return assemble(
        builder,
        source=SOURCE,
        source_id=f"{run}:{sample_id}:{epoch}",
        success=error is None and (answered if reward is None else passed),
        options=options,
        objective=told.objective,
        fallback_objective=_input_text(sample.get("input")),
        created_at=iso_time(sample.get("started_at")) or iso_time(spec.get("created")),
        result_summary=builder.final_answer or _output_text(output),
        agent_id=as_string(spec.get("model")) or SOURCE,
        framework=SOURCE,
        model=_model(spec, output, messages),
        metadata=as_object(sample.get("metadata")),
        warnings=warnings,
        source_extra={"sample": sample_id, "epoch": epoch},
        content_hint=CONTENT_HINT,
        location=Location(record.location.file, record.location.line),
        task=f"{spec['task']}/{sample_id}",
        reward=reward,
        system=told.system,
    )


def _output_text(output: Mapping[str, Any]) -> str | None:
    """A sample's ``output`` as Inspect reads it: its ``completion``, else its first choice's text.

    ``ModelOutput`` fills ``completion`` in from its first choice's message when it is empty,
    and logs write it so, without the field.
    """
    completion = as_string(output.get("completion"))
    if completion:
        return completion
    choices = output.get("choices")
    first = as_object(choices[0]) if isinstance(choices, list) and choices else {}
    return content_text(as_object(first.get("message")).get("content")) or None


def _is_result(message: Any) -> bool:
    """Whether a message is a tool's result (naming its call in ``tool_call_id``)."""
    return isinstance(message, dict) and message.get("role") == "tool"


def _said_by_model(message: Any) -> bool:
    """Whether a message is the model's (an assistant turn): the agent worked in the messages."""
    return isinstance(message, dict) and message.get("role") == "assistant"


def _model(spec: Mapping[str, Any], output: Any, messages: list[Any]) -> str | None:
    """The model of the sample's last reply: its assistant message's, the output's, the eval's."""
    replies = (
        m.get("model") for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
    )
    return last_model((spec.get("model"), as_object(output).get("model"), *replies))


def _failed_calls(messages: list[Any]) -> frozenset[str]:
    """The ids of the calls whose tool message carries an ``error``."""
    return frozenset(
        message["tool_call_id"]
        for message in messages
        if isinstance(message, dict)
        and message.get("role") == "tool"
        and message.get("error")
        and isinstance(message.get("tool_call_id"), str)
    )


def _chat(message: Any) -> Any:
    """An Inspect ``ChatMessage`` as a Chat Completions message; anything else as it is."""
    if not isinstance(message, dict):
        return message
    role, content = message.get("role"), message.get("content")
    chat: dict[str, Any] = {"role": role, "content": content_text(content)}
    if isinstance(content, list):
        reasoning = [
            text
            for part in content
            if isinstance(part, dict) and part.get("type") == "reasoning"
            for text in [_reasoning_text(part)]
            if text
        ]
        if reasoning:
            chat["reasoning_content"] = "\n".join(reasoning)
    calls = message.get("tool_calls")
    if role == "assistant" and calls:
        # Not a list: as it is, for the reader to say where it is wrong.
        chat["tool_calls"] = [_call(call) for call in calls] if isinstance(calls, list) else calls
    if role == "tool":
        chat["tool_call_id"] = message.get("tool_call_id")
        chat["name"] = message.get("function")
        failure = as_object(message.get("error"))
        if failure:  # the error's own words: the content may be empty, or the tool's output
            chat["content"] = as_string(failure.get("message")) or chat["content"] or "error"
    return chat


def _reasoning_text(part: dict[str, Any]) -> str | None:
    """A ``reasoning`` part's readable text, if any.

    Its ``reasoning``, or its ``summary`` where that is redacted (OpenAI's encrypted reasoning:
    the summary is all of the model's thought one can read).
    """
    if not part.get("redacted") and isinstance(part.get("reasoning"), str):
        return str(part["reasoning"])
    summary = part.get("summary")
    return summary if isinstance(summary, str) and summary.strip() else None


def _call(call: Any) -> Any:
    if not isinstance(call, dict) or not isinstance(call.get("function"), str):
        return call  # the reader says where it is wrong
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call["function"], "arguments": call.get("arguments")},
    }


def _input_text(value: Any) -> str | None:
    """A sample's ``input``: its text, or the first user message's of a list."""
    if isinstance(value, str):
        return value
    for message in value if isinstance(value, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return None


def _scores(sample: dict[str, Any]) -> Any:
    """A sample's scores by scorer.

    Logs of version 1 (Inspect before mid-2024, one scorer a task) keep the one ``Score`` as
    ``score``: without reading it, an incorrect answer (``I``) passed as a run that ends in its
    answer.
    """
    if "scores" not in sample and isinstance(sample.get("score"), dict):
        return {"score": sample["score"]}
    return sample.get("scores")


def _reward(scores: Any) -> float | None:
    """The first score whose value reads as a number (``value_to_float``'s way), else ``None``."""
    for score in as_object(scores).values():
        number = score_value(as_object(score).get("value"))
        if number is not None:
            return number
    return None


def score_value(value: Any) -> float | None:
    """A score's value as a number: Inspect's letters, booleans, numbers, numeric or yes/no text."""
    if isinstance(value, bool | int | float):
        number = float(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str):
        return None  # a dict or list of values: no single outcome
    if value in SCORE_VALUES:
        return SCORE_VALUES[value]
    word = value.strip().lower()
    if word in _WORDS:
        return _WORDS[word]
    try:
        number = float(word)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def describe(first: Any, count: int) -> str:
    """What a log was read as: its task, model and status, a trace per sample and epoch."""
    spec = as_object(first.get("eval") if isinstance(first, dict) else None)
    model = as_string(spec.get("model"))
    status = as_string(first.get("status")) if isinstance(first, dict) else None
    return (
        f"read as {SOURCE} ({counted(count, 'trace')}: a trace per sample and epoch of task "
        f"{spec.get('task')!r}{f', model {model}' if model else ''}, status {status}); "
        "steps from samples[].messages, success from samples[].scores"
    )


MAPPING = {
    "steps": "samples[].messages",
    "id": "eval.run_id, samples[].id, samples[].epoch",
    "task": "eval.task, samples[].id",
    "success": "samples[].scores (version 1: samples[].score)",
    "created_at": "samples[].started_at, else eval.created",
}
"""The fields each part of a trace is read from (``kp inspect``)."""


__all__ = [
    "CONTENT_HINT",
    "MAPPING",
    "SCORE_VALUES",
    "convert_records",
    "describe",
    "recognises",
    "score_value",
]
