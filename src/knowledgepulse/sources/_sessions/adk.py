"""Google ADK's own files as traces: a saved session, and an eval set (``*.evalset.json``).

A session is what ``adk web`` and ``adk api_server`` serve (``GET /apps/{app}/users/{user}/
sessions/{id}``) and ``adk run --save_session`` writes: ``{id, app_name, user_id, state,
events}``, one trace. Each event is ``{author, invocation_id, content, actions, timestamp}``;
its ``content`` is a Gemini ``Content`` (``{role, parts}``), read by the Gemini contents reader
(:mod:`knowledgepulse.sources._chat.gemini`): the user's text, the model's text, thoughts and
``function_call`` parts, and the ``function_response`` parts ADK sends back in the agent's name.
An event with an ``error_code`` or ``error_message`` (the model's call failed: ``MALFORMED_
FUNCTION_CALL``, a safety block) is an evident error met outside a tool. A tool's ``{"status":
"error", "error_message": ...}`` (the result ADK's docs tell tools to return) is an evident
error, as the span reader reads it (``_text.reported_failure``). An event without content (a
state change only) and a ``partial`` one (a streamed chunk, which the runner does not keep) say
nothing. A session records no outcome: success is whether it ends in the model's answer.

An eval set (``{eval_set_id, eval_cases}``; ADK's older ``*.test.json`` files hold the same) is a
trace per eval case: its ``conversation`` of invocations, each the user's ``user_content``, what
happened in between (``intermediate_data``: ADK's ``invocation_events``, the events, or the older
``tool_uses``, ``tool_responses`` and ``intermediate_responses``, which keep no order among them:
the sub-agents' texts, then the calls, then their results) and the ``final_response``. A case is
what ADK recorded from a session ("add session to eval set") as the reference the agent is
scored against, no verdict: success is whether it ends in an answer. A case that holds no turn of
the agent's (written by hand: prompts and rubrics only, or a user simulator's scenario) is a
problem. Every field is read in snake case or camel case (:func:`gemini.field`).

An eval result (``*.evalset_result.json``, which ``adk eval`` and ``adk web`` write under
``.adk/eval_history/``: ``{eval_set_result_id, eval_set_id, eval_case_results}``) is a trace per
case result, told from its ``eval_metric_result_per_invocation[].actual_invocation`` (the run that
happened, read as an eval case's invocations; the ``expected_invocation`` is the reference it was
scored against). Success is ADK's verdict, ``final_eval_status``: 1 passed, 2 failed; 3 (not
evaluated: no metric ran) is no verdict, read as a reference run is. The metrics' results
(``overall_eval_metric_results``: name, score, threshold, status) are kept in ``metadata.source``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, describe_value
from knowledgepulse._util.text import counted
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat import anthropic, gemini
from knowledgepulse.sources._chat._text import one_of, reported_failure
from knowledgepulse.sources._envelope import (
    PathError,
    TraceOptions,
    assemble,
    finished,
    first_model,
    last_model,
)
from knowledgepulse.sources._sessions._documents import documents
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.item import finite_number

SOURCE = "adk"
CONTENT_HINT = "ADK keeps each event's content in the session; check the file is a whole session"
JsonPath = tuple[str | int, ...]


def recognises(value: Any) -> bool:
    """Whether a record is an ADK session, eval set or eval result."""
    return _session(value) or _eval_set(value) or _result(_decoded(value))


def _result(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(gemini.field(value, "evalCaseResults"), list)
        and gemini.field(value, "evalSetResultId") is not None
    )


def _decoded(value: Any) -> Any:
    """A record that is a JSON string holding an eval result, as the object it holds.

    ADK's local results manager wrote ``json.dumps(result.model_dump_json())`` (and reads it back
    with ``json.load`` then ``model_validate_json``): the file is a JSON string of the JSON.
    """
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _session(value: Any) -> bool:
    events = value.get("events") if isinstance(value, dict) else None
    if not isinstance(events, list):
        return False
    first = events[0] if events and isinstance(events[0], dict) else {}
    return gemini.field(value, "appName") is not None or (
        "author" in first and gemini.field(first, "invocationId") is not None
    )


def _eval_set(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(gemini.field(value, "evalCases"), list)
        and gemini.field(value, "evalSetId") is not None
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace per session, and per eval case of an eval set; what is neither, a problem."""
    expected = (
        "an ADK session {id, app_name, events}, eval set {eval_set_id, eval_cases} or eval "
        "result {eval_set_result_id, eval_case_results}"
    )
    for item in documents(records, recognises, what="an ADK file", expected=expected):
        if isinstance(item, Problem):
            yield item
        elif _result(result := _decoded(item.value)):
            for index, case in enumerate(gemini.field(result, "evalCaseResults")):
                yield finished(partial(_result_trace, item, result, index, case, options), item)
        elif _session(item.value):
            yield finished(partial(_session_trace, item, options), item)
        else:
            cases = gemini.field(item.value, "evalCases")
            for index, case in enumerate(cases):
                yield finished(partial(_case_trace, item, index, case, options), item)


def _session_trace(record: Record, options: TraceOptions) -> TraceItem:
    """One session: its events' contents, in order, as one run."""
    session = record.value
    contents: list[Any] = []
    origins: list[JsonPath] = []
    errors: set[int] = set()
    for index, event in enumerate(session["events"]):
        _event(event, ("events", index), contents, origins, errors)
    stamps = [gemini.field(e, "timestamp") for e in session["events"] if isinstance(e, dict)]
    started = next((t for t in stamps if isinstance(t, int | float) and t > 0), None)
    app = as_string(gemini.field(session, "appName"))
    return _trace(
        contents,
        origins,
        errors,
        record,
        options,
        source_id=as_string(session.get("id")) or app or "adk-session",
        created_at=started,
        agent=app,
        extra={"user_id": as_string(gemini.field(session, "userId"))},
        model=_session_model(session),
    )


def _session_model(session: Mapping[str, Any]) -> str | None:
    """The model of a session's last reply, as the session names it.

    An event's ``model_version`` (an ``LlmResponse``'s, where the ADK that wrote it keeps one),
    else the ``event_logs`` of ADK before 1.0: each model call's ``model_response``
    (``model_version``) and ``model_request`` (``model``).
    """
    events = _listed(session.get("events"))
    logs = [as_object(log) for log in _listed(gemini.field(session, "eventLogs"))]
    return last_model(
        [gemini.field(as_object(event), "modelVersion") for event in events]
    ) or last_model(
        first_model(
            gemini.field(as_object(gemini.field(log, "modelResponse")), "modelVersion"),
            gemini.field(as_object(gemini.field(log, "modelRequest")), "model"),
        )
        for log in logs
    )


def _case_trace(record: Record, index: int, case: Any, options: TraceOptions) -> TraceItem:
    """One eval case: its invocations' user content, intermediate data and final response."""
    at: JsonPath = ("eval_cases", index)
    turns = gemini.field(case, "conversation") if isinstance(case, dict) else None
    if not isinstance(turns, list):
        raise PathError(
            at,
            f"an eval case without a recorded conversation: {describe_value(case)}; a "
            "conversation_scenario (a user simulator's plan) holds no run to read",
        )
    pairs = [((*at, "conversation", n), turn) for n, turn in enumerate(turns)]
    app = gemini.field(as_object(gemini.field(case, "sessionInput")), "appName")
    ids = _ids(record.value, case, index)
    extra = {"eval_set_id": ids[0], "eval_id": ids[1], "reference": True}
    return _turns_trace(record, options, at, pairs, ids=ids, dated=case, app=app, extra=extra)


def _result_trace(
    record: Record, result: Any, index: int, case: Any, options: TraceOptions
) -> TraceItem:
    """One case of an eval result: its actual invocations, with ADK's verdict and metrics."""
    at: JsonPath = ("eval_case_results", index)
    per = _listed(gemini.field(as_object(case), "evalMetricResultPerInvocation"))
    pairs = [
        ((*at, "eval_metric_result_per_invocation", n, "actual_invocation"), actual)
        for n, entry in enumerate(per)
        if (actual := gemini.field(as_object(entry), "actualInvocation")) is not None
    ]
    if not pairs:
        raise PathError(at, "a case result without an actual_invocation: no run was kept")
    status = gemini.field(case, "finalEvalStatus")
    overall = [as_object(m) for m in _listed(gemini.field(case, "overallEvalMetricResults"))]
    ids = _ids(result, case, index)
    extra = {
        "eval_set_result_id": as_string(gemini.field(result, "evalSetResultId")),
        "eval_set_id": ids[0],
        "eval_id": ids[1],
        "session_id": as_string(gemini.field(case, "sessionId")),
        "eval_status": _STATUS.get(status, "not evaluated"),
        "metrics": {
            str(gemini.field(m, "metricName")): {
                "score": finite_number(gemini.field(m, "score")),
                "threshold": finite_number(gemini.field(m, "threshold")),
                "eval_status": _STATUS.get(gemini.field(m, "evalStatus")),
            }
            for m in overall
        }
        or None,
    }
    app = gemini.field(as_object(gemini.field(case, "sessionDetails")), "appName")
    verdict = {1: True, 2: False}.get(status) if isinstance(status, int) else None
    return _turns_trace(
        record, options, at, pairs, ids=ids, dated=result, app=app, extra=extra, verdict=verdict
    )


_STATUS = {1: "passed", 2: "failed", 3: "not evaluated"}
"""ADK's ``EvalStatus``, as its files write it (an integer)."""


def _ids(document: Any, case: Any, index: int) -> tuple[str, str]:
    """The eval set's id and the case's: ``eval_set_id``, ``eval_id``."""
    set_id = as_string(gemini.field(document, "evalSetId")) or "eval-set"
    return set_id, as_string(gemini.field(case, "evalId")) or str(index)


def _turns_trace(
    record: Record,
    options: TraceOptions,
    at: JsonPath,
    pairs: list[tuple[JsonPath, Any]],
    *,
    ids: tuple[str, str],
    dated: Any,
    app: Any,
    extra: dict[str, Any],
    verdict: bool | None = None,
) -> TraceItem:
    """Invocations as one trace: an eval case's conversation, or an eval result's actual run."""
    contents: list[Any] = []
    origins: list[JsonPath] = []
    errors: set[int] = set()
    for path, turn in pairs:
        _invocation(as_object(turn), path, contents, origins, errors)
    if all(content.get("role") == "user" for content in contents):
        raise PathError(
            (*at, "conversation"),
            "no turn of the agent's in this eval case (no final_response, no intermediate_data): "
            "a case written by hand holds the user's prompts only; record one from a session",
        )
    created = gemini.field(dated, "creationTimestamp")
    try:
        return _trace(
            contents,
            origins,
            errors,
            record,
            options,
            source_id="/".join(ids),
            created_at=created if isinstance(created, int | float) and created > 0 else None,
            agent=as_string(app),
            extra=extra,
            verdict=verdict,
        )
    except ConversionError as error:  # said at the case, not at the whole file
        raise PathError(at, str(error)) from None


def _event(
    event: Any, path: JsonPath, contents: list[Any], origins: list[JsonPath], errors: set[int]
) -> None:
    """An event's content, or its error; nothing for a state change or a streamed chunk."""
    if not isinstance(event, dict) or event.get("partial") is True:
        return
    author = as_string(event.get("author"))
    failed = gemini.field(event, "errorCode") or gemini.field(event, "errorMessage")
    content = gemini.field(event, "content")
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        contents.append(_content(content, author))
        origins.append((*path, "content"))
    if failed:
        said = (gemini.field(event, "errorCode"), gemini.field(event, "errorMessage"))
        errors.add(len(contents))
        text = ": ".join(str(value) for value in said if value)
        contents.append({"role": "model", "parts": [{"text": text}]})
        origins.append(path)


def _invocation(
    turn: Mapping[str, Any],
    path: JsonPath,
    contents: list[Any],
    origins: list[JsonPath],
    errors: set[int],
) -> None:
    """An invocation of an eval case as contents: the user's, what happened, the response."""
    said = gemini.field(turn, "userContent")
    if isinstance(said, dict):
        contents.append(_content(said, "user"))
        origins.append((*path, "user_content"))
    data = as_object(gemini.field(turn, "intermediateData"))
    events = gemini.field(data, "invocationEvents")
    if isinstance(events, list):
        for n, event in enumerate(events):
            _event(
                event,
                (*path, "intermediate_data", "invocation_events", n),
                contents,
                origins,
                errors,
            )
    else:
        inside = (*path, "intermediate_data")
        for said_by in _listed(gemini.field(data, "intermediateResponses")):
            # [author, parts]: a sub-agent's text before the final response
            if isinstance(said_by, list) and len(said_by) == 2 and isinstance(said_by[1], list):
                contents.append({"role": "model", "parts": said_by[1]})
                origins.append((*inside, "intermediate_responses"))
        calls = [{"function_call": call} for call in _listed(gemini.field(data, "toolUses"))]
        answers = _listed(gemini.field(data, "toolResponses"))
        for parts, role, name in (
            (calls, "model", "tool_uses"),
            ([{"function_response": answer} for answer in answers], "user", "tool_responses"),
        ):
            if parts:
                contents.append(_content({"role": role, "parts": parts}, None))
                origins.append((*inside, name))
    final = gemini.field(turn, "finalResponse")
    if isinstance(final, dict):
        contents.append(_content(final, "agent"))
        origins.append((*path, "final_response"))


def _content(content: Mapping[str, Any], author: str | None) -> dict[str, Any]:
    """A content with its role: ADK leaves it out of a hand-written eval case's user content.

    Without one, the author says: the user's, else the agent's, whose function responses ADK
    sends as the user's (as the Gemini API takes them).
    """
    parts = content.get("parts")
    if not isinstance(parts, list):
        return dict(content)  # the Gemini reader says what is wrong, at its place
    role = content.get("role")
    if not one_of(role, gemini.ROLES):
        answers = any(
            isinstance(p, dict) and gemini.field(p, "functionResponse") is not None for p in parts
        )
        role = "user" if author == "user" or answers else "model"
    return {"role": role, "parts": [_failed(p) if isinstance(p, dict) else p for p in parts]}


def _failed(part: dict[str, Any]) -> dict[str, Any]:
    """A function response whose result says it failed, with that as its ``error``.

    ADK's tools report a failure in their result (``{"status": "error", "error_message": ...}``,
    as its docs write them); the Gemini reader marks a response failed by its ``error`` only.
    """
    answer = gemini.field(part, "functionResponse")
    result = answer.get("response") if isinstance(answer, dict) else None
    why = reported_failure(result) if isinstance(result, Mapping) else None
    if why is None or not isinstance(answer, dict) or answer.get("error") is not None:
        return part
    return {"function_response": {**answer, "error": why}}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _trace(
    contents: list[Any],
    origins: list[JsonPath],
    errors: set[int],
    record: Record,
    options: TraceOptions,
    *,
    source_id: str,
    created_at: float | None,
    agent: str | None,
    extra: dict[str, Any],
    verdict: bool | None = None,
    model: str | None = None,
) -> TraceItem:
    """The contents told by the Gemini reader (a problem at the event it came from).

    Success is the ``verdict`` where ADK gave one, else whether the run ends in an answer.
    """
    try:
        messages = gemini.as_anthropic(contents)
    except PathError as error:
        match error.path:
            case (int(index), *inside) if index < len(origins):  # at the event it came from
                raise PathError((*origins[index], *inside), error.message) from None
            case _:
                raise
    builder = StepBuilder()
    told = anthropic.tell(messages, builder, errors=errors)
    return assemble(
        builder,
        source=SOURCE,
        source_id=source_id,
        success=(
            told.answered and builder.final_answer is not None if verdict is None else verdict
        ),
        options=options,
        objective=told.objective,
        created_at=created_at,
        result_summary=builder.final_answer,
        agent_id=agent or "google-adk",
        framework="google-adk",
        model=model,
        source_extra={k: v for k, v in extra.items() if v is not None},
        content_hint=CONTENT_HINT,
        location=Location(record.location.file, record.location.line),
    )


def describe(first: Any, count: int) -> str:
    """What a file was read as, and that an eval case's run is a reference, not a verdict."""
    if _session(first):
        return (
            f"read as {SOURCE} ({counted(count, 'trace')}: an ADK session); steps from "
            "events[].content, success: whether it ends in the model's answer"
        )
    if _result(_decoded(first)):
        return (
            f"read as {SOURCE} ({counted(count, 'trace')}: a trace per case of an ADK eval "
            "result); steps from eval_metric_result_per_invocation[].actual_invocation, success "
            "from final_eval_status (3, not evaluated: whether it ends in an answer)"
        )
    return (
        f"read as {SOURCE} ({counted(count, 'trace')}: a trace per eval case of an ADK eval "
        "set, a reference run, no verdict); steps from conversation[]; success: whether it "
        "ends in an answer"
    )


def mapping(first: Any) -> dict[str, str]:
    """The fields a session's or an eval case's trace is read from."""
    if _session(first):
        return {"steps": "events[].content", "id": "id", "created_at": "events[].timestamp"}
    if _result(_decoded(first)):
        return {
            "steps": "eval_case_results[].eval_metric_result_per_invocation[].actual_invocation",
            "id": "eval_set_id/eval_case_results[].eval_id",
            "success": "eval_case_results[].final_eval_status",
            "created_at": "creation_timestamp",
        }
    return {
        "steps": "eval_cases[].conversation[]",
        "id": "eval_set_id/eval_cases[].eval_id",
        "created_at": "eval_cases[].creation_timestamp",
    }


def evidence(value: Any) -> str:
    """Which of ADK's files a record is, by the keys that make it one."""
    if _session(value):
        return f"{describe_value(value)}, as in an ADK session (events of author, invocation_id)"
    if _result(result := _decoded(value)):
        held = "a JSON string holding " if isinstance(value, str) else ""
        return f"{held}{describe_value(result)}, as in an ADK eval result (eval_case_results)"
    return f"{describe_value(value)}, as in an ADK eval set (eval_set_id, eval_cases)"


__all__ = ["CONTENT_HINT", "convert_records", "describe", "evidence", "mapping", "recognises"]
