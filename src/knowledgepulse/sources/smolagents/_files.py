"""smolagents steps in files: recognising them, and every run in one file's records."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from knowledgepulse._util.jsonpath import as_object, describe_value
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import Loc
from knowledgepulse.sources._envelope import (
    PathError,
    TraceOptions,
    finished,
    first_model,
    placed,
)
from knowledgepulse.sources.smolagents import _messages
from knowledgepulse.sources.smolagents._run import (
    ACTION_KEYS,
    PLANNING_KEYS,
    RUN_KEYS,
    TASK_KEYS,
    Run,
    finish,
    is_task,
    not_a_step,
    number,
    runs_of,
    tell,
    text,
)
from knowledgepulse.trace import TraceItem


def recognises(value: Any) -> bool:
    """Whether a first record is smolagents': a step, steps, a run result, a benchmark row."""
    if _messages.is_row(value):
        return True
    if isinstance(value, list):
        return bool(value) and _is_step(value[0])
    if isinstance(value, dict) and value.keys() >= RUN_KEYS:
        steps = value["steps"]
        return isinstance(steps, list) and (not steps or _is_step(steps[0]))
    return _is_step(value)


def _is_step(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    keys = value.keys()
    if "task" in keys and keys <= TASK_KEYS:
        return isinstance(value["task"], str)
    timed = isinstance(value.get("timing"), dict)
    return timed and (keys >= ACTION_KEYS or keys >= PLANNING_KEYS)


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every run in one file's records.

    A record that is one step belongs to the file's current run (JSON Lines of steps); a record
    that is a list of steps holds its runs, and a run result its last run (JSON Lines of runs:
    one a line). A ``TaskStep`` starts a run: a memory kept with ``agent.run(task,
    reset=False)`` holds each run after the one before. A step that cannot be read is reported
    where it is and left out; the rest of its run still converts.
    """
    shared = Run()
    shared_first: Record | None = None
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        value = item.value
        if _messages.has_row_keys(value):
            yield _convert_row(item, options)
        elif isinstance(value, list) or (isinstance(value, dict) and value.keys() >= RUN_KEYS):
            yield from _convert_record_run(item, options)
        elif isinstance(value, dict):
            if is_task(value) and shared_first is not None:  # the next run (reset=False)
                yield _finish_shared(shared, shared_first, options)
                shared, shared_first = Run(), None
            try:
                tell(shared, value, ())
            except PathError as error:
                yield item.problem(error.path, error.message)
            else:
                shared_first = shared_first or item
        else:
            yield item.problem((), not_a_step(value))
    if shared_first is not None:
        yield _finish_shared(shared, shared_first, options)


def _finish_shared(run: Run, first: Record, options: TraceOptions) -> TraceItem | Problem:
    """The run told by step records, placed where its first step was read."""

    def trace() -> TraceItem:
        found = finish(run, options, state=None, output=None, agent_id=None, trace_id=None)
        return placed(found, Location(first.location.file))

    return finished(trace, first)


def _convert_row(record: Record, options: TraceOptions) -> TraceItem | Problem:
    """A benchmark row: its messages read back as the run's steps, its ``answer`` the output.

    A run that raised before its first step (a model call refused) has no message, and its
    ``answer`` is the exception's text: the run's error, no answer. Its model is the one its
    replies name, else the row's ``model_id`` (the model the benchmark ran).
    """
    value = record.value
    run = Run(started=number(value.get("start_time")))
    # The row's question and answer tell runs apart where the messages do not (none at all).
    run.canonical.append({key: value[key] for key in ("question", "answer")})
    try:
        for index, step in enumerate(_messages.steps_of(value["intermediate_steps"], ())):
            tell(run, step, ("intermediate_steps", index))
    except PathError as error:
        return record.problem(("intermediate_steps", *error.path), error.message)
    run.model = first_model(run.model, value.get("model_id"))
    if run.objective is None and isinstance(value["question"], str):
        run.objective = value["question"]
    output = value["answer"]
    if not value["intermediate_steps"]:  # the run raised before its first step: its error
        run.builder.error(text(output), terminal=True)
        output = None
    try:
        converted = finish(run, options, state=None, output=output, agent_id=None, trace_id=None)
    except ConversionError as error:
        return record.problem(("intermediate_steps",), str(error))
    return placed(converted, Location(record.location.file))


def _convert_record_run(record: Record, options: TraceOptions) -> Iterator[TraceItem | Problem]:
    value = record.value
    prefix: Loc = ()
    state: Any = None
    output: Any = None
    started: float | None = None
    if isinstance(value, dict):
        steps, state, output = value["steps"], value.get("state"), value.get("output")
        started = number(as_object(value.get("timing")).get("start_time"))
        prefix = ("steps",)
        if not isinstance(steps, list):
            yield record.problem(prefix, f"expected a list of steps, found {describe_value(steps)}")
            return
    else:
        steps = value
    runs = runs_of(steps) or [(0, [])]  # no step: said below, as a run with none
    if prefix:  # a RunResult: its state, output and timing are its last run's
        runs = runs[-1:]
    for position, (first, run_steps) in enumerate(runs, start=1):
        last = position == len(runs)
        run = Run(started=started if last else None)
        for index, step in enumerate(run_steps, start=first):
            try:
                tell(run, step, (*prefix, index))
            except PathError as error:
                yield record.problem(error.path, error.message)
        try:
            converted = finish(
                run,
                options,
                state=state if last else None,
                output=output if last else None,
                agent_id=None,
                trace_id=None,
            )
        except ConversionError as error:
            yield record.problem((*prefix, first), str(error))
        else:
            yield placed(converted, Location(record.location.file))
